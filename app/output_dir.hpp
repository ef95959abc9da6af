#pragma once
// The run's output directory: created and proven writable before any step is taken (files
// in it are written atomically by io/snapshot_files.hpp).
#include "io/deck.hpp"

#include <string>

namespace adi3d::app {

// Throws DeckError at output.dir when the directory cannot be created or written.
void prepare_output_dir(const io::Deck& deck, const std::string& dir);

}  // namespace adi3d::app
