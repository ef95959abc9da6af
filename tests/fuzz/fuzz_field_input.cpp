// libFuzzer target: a user's HDF5 file for `material.diffusivity = hdf5 FILE:/DATASET`.
// The input is the file's bytes; the dataset /field is read for a 5 x 4 x 3 grid, or
// refused with an OutputError naming the file and what is wrong.
#include "io/field_input.hpp"
#include "io/snapshot.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/adi3d_fuzz_field_" + std::to_string(::getpid()) + ".h5";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  adi3d::Grid3 grid;
  grid.n = {5, 4, 3};
  try {
    static_cast<void>(adi3d::io::read_grid_dataset(path, "/field", grid));
  } catch (const adi3d::io::OutputError&) {
  }
  return 0;
}
