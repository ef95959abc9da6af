#include "io/field_input.hpp"

#include "io/hdf5_handles.hpp"
#include "io/hdf5_probe.hpp"

namespace adi3d::io {

namespace {

std::vector<double> read_values(const std::string& file, const std::string& dataset, const Grid3& grid) {
  h5::Hdf5Lock lock;
  h5::Handle handle = h5::open_file(file, false);
  if (!h5::has_link(handle, dataset, file)) throw OutputError(file + ": no dataset '" + dataset + "'");
  h5::dataset_float_size(handle, dataset, file);  // throws unless floating point
  std::vector<double> values;
  h5::read_field(handle, dataset, grid, false, nullptr, &values, file);
  return values;
}

}  // namespace

std::vector<double> read_grid_dataset(const std::string& file, const std::string& dataset, const Grid3& grid) {
  const std::string crash = crash_in_child([&] { read_values(file, dataset, grid); });
  if (!crash.empty())
    throw OutputError(file + ": damaged HDF5 file: reading dataset '" + dataset + "' ended in " + crash +
                      " inside HDF5");
  return read_values(file, dataset, grid);
}

}  // namespace adi3d::io
