#pragma once
// The run's output directory: created and proven writable before any step is taken, and
// files in it written atomically (temporary name, flush, rename) so nothing is ever left
// half-written.
#include "io/deck.hpp"

#include <string>

namespace adi3d::app {

// Throws DeckError at output.dir when the directory cannot be created or written.
void prepare_output_dir(const io::Deck& deck, const std::string& dir);

// Writes `contents` to `path` via a temporary file and rename; throws std::runtime_error.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace adi3d::app
