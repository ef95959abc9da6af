#include "io/snapshot_files.hpp"

#include "io/snapshot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace adi3d::io {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw OutputError(fmt::format("{}: {} failed: {}", path, what, std::strerror(err)));
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) fail(path, "open for fsync", errno);
  // A directory fsync may be refused (EINVAL) on some filesystems; the rename is done then.
  if (::fsync(fd) != 0 && !(directory && errno == EINVAL)) {
    const int err = errno;
    ::close(fd);
    fail(path, "fsync", err);
  }
  ::close(fd);
}

}  // namespace

void fsync_file(const std::string& path) { fsync_path(path, false); }

std::string snapshot_label(long step) { return fmt::format("{:06d}", step); }

void commit_file(const std::string& tmp, const std::string& path) {
  try {
    fsync_path(tmp, false);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, "rename into place", err);
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  fsync_path(dir.empty() ? "." : dir.string(), true);
}

void write_text_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(tmp, "open for writing", errno);
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size() &&
                  std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    fail(tmp, "write", ok ? errno : err);
  }
  commit_file(tmp, path);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw OutputError(fmt::format("{}: cannot open for reading", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace adi3d::io
