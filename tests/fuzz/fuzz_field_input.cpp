// libFuzzer target: a user's HDF5 file for `material.diffusivity = hdf5 FILE:/DATASET`.
// The input is the file's bytes; the dataset /field is read for a 5 x 4 x 3 grid, or
// refused with an OutputError naming the file and what is wrong.
#include "input_file.hpp"
#include "io/field_input.hpp"
#include "io/snapshot.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = input_as_file(data, size, "fuzz_field_input");
  if (path.empty()) return 0;
  adi3d::Grid3 grid;
  grid.n = {5, 4, 3};
  try {
    static_cast<void>(adi3d::io::read_grid_dataset(path, "/field", grid));
  } catch (const adi3d::io::OutputError&) {
  }
  return 0;
}
