#include "io/hdf5_layout.hpp"

#include <algorithm>

namespace adi3d::io::h5 {

std::array<hsize_t, 3> field_chunk(const Grid3& grid, std::size_t value_bytes) {
  const auto nx = static_cast<hsize_t>(grid.n[0]), ny = static_cast<hsize_t>(grid.n[1]),
             nz = static_cast<hsize_t>(grid.n[2]);
  const hsize_t row = nx * value_bytes, plane = row * ny;
  if (plane <= kChunkTarget) return {std::clamp<hsize_t>(kChunkTarget / plane, 1, nz), ny, nx};
  return {1, std::clamp<hsize_t>(kChunkTarget / row, 1, ny), nx};
}

Handle field_creation(const Grid3& grid, std::size_t value_bytes, const Compression& compression,
                      const std::string& file) {
  const std::string what = "set a dataset's layout";
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, file, what);
  if (!compression.on()) {
    check(H5Pset_layout(dcpl, H5D_CONTIGUOUS), file, what);
    // Every value is written by the one H5Dwrite that follows: a fill would be wasted
    // bytes. (Chunks written whole are never filled; HDF5 refuses NEVER with filters.)
    check(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), file, what);
    return dcpl;
  }
  const std::array<hsize_t, 3> chunk = field_chunk(grid, value_bytes);
  check(H5Pset_chunk(dcpl, 3, chunk.data()), file, what);
  if (compression.kind == Compression::Kind::gzip) {
    // Shuffle groups the bytes of equal significance, which deflate compresses far better
    // for floating-point data; both are lossless.
    check(H5Pset_shuffle(dcpl), file, what);
    check(H5Pset_deflate(dcpl, static_cast<unsigned>(compression.level)), file, what);
  } else {
    check(H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 32), file, what);
  }
  return dcpl;
}

Handle field_access(const Grid3& grid, std::size_t value_bytes, const std::string& file) {
  const std::string what = "set a dataset's chunk cache";
  Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, file, what);
  const std::array<hsize_t, 3> chunk = field_chunk(grid, value_bytes);
  const std::size_t bytes = static_cast<std::size_t>(chunk[0] * chunk[1] * chunk[2]) * value_bytes;
  // One chunk held while it is filtered; a prime number of slots, as HDF5 advises.
  check(H5Pset_chunk_cache(dapl, 521, bytes + (1u << 20), 1.0), file, what);
  return dapl;
}

Handle field_transfer(bool converts, const std::string& file) {
  const std::string what = "set a dataset's transfer";
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, file, what);
  if (converts) check(H5Pset_buffer(dxpl, kConversionBuffer, nullptr, nullptr), file, what);
  return dxpl;
}

}  // namespace adi3d::io::h5
