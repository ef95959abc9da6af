#pragma once
// Small file operations for output: atomic replacement (temporary name, fsync, rename,
// fsync of the directory) so that a crash leaves either the old or the new file.
#include <string>

namespace adi3d::io {

// Writes `contents` to `path` atomically; throws OutputError naming the file and the step
// that failed (open, write, fsync, rename) with the system's reason.
void write_text_atomically(const std::string& path, const std::string& contents);

// fsync of an existing file (its data is on the disk when this returns); throws OutputError.
void fsync_file(const std::string& path);

// fsync of an existing file, then rename over `path`, then fsync of the directory.
void commit_file(const std::string& tmp, const std::string& path);

// Reads a whole text file; throws OutputError.
std::string read_text_file(const std::string& path);

}  // namespace adi3d::io
