#pragma once
// Grid fields read from the user's HDF5 files (a diffusivity map from a CAD or thermal
// tool): a 3D dataset shaped (nz, ny, nx), x fastest, as adi3d writes its own snapshots.
#include "solvers/grid.hpp"

#include <string>
#include <vector>

namespace adi3d::io {

// Throws OutputError naming the file and dataset when the file cannot be opened, the
// dataset is missing, not floating point or not shaped like the grid.
std::vector<double> read_grid_dataset(const std::string& file, const std::string& dataset, const Grid3& grid);

}  // namespace adi3d::io
