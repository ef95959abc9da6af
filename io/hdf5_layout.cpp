#include "io/hdf5_layout.hpp"

#include <fcntl.h>

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
    // Allocated at creation (nothing is written then): its place in the file is known
    // before the first block goes, for the write-out hints.
    check(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), file, what);
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

Handle field_transfer(bool converts, bool collective, const std::string& file) {
  const std::string what = "set a dataset's transfer";
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, file, what);
  if (converts) check(H5Pset_buffer(dxpl, kConversionBuffer, nullptr, nullptr), file, what);
#ifdef H5_HAVE_PARALLEL
  // Collective: HDF5 writes chunked, filtered datasets of a shared file no other way, and
  // MPI-IO can then merge the ranks' neighbouring pieces into large writes.
  if (collective) check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), file, what);
#else
  if (collective) throw OutputError(file + ": a collective write needs parallel HDF5");
#endif
  return dxpl;
}

hsize_t planes_per_block(const Grid3& grid, std::size_t value_bytes, std::size_t block_bytes) {
  const hsize_t plane = static_cast<hsize_t>(grid.n[0]) * static_cast<hsize_t>(grid.n[1]) * value_bytes;
  return std::clamp<hsize_t>(block_bytes / plane, 1, static_cast<hsize_t>(grid.n[2]));
}

namespace {

// The file descriptor under a dataset's file where HDF5 writes through the POSIX (sec2)
// driver, else -1: only for write-out hints, so anything unexpected means no hints.
int posix_descriptor(hid_t set) {
  const hid_t file = H5Iget_file_id(set);
  if (file < 0) return -1;
  int fd = -1;
  const hid_t fapl = H5Fget_access_plist(file);
  void* handle = nullptr;
  if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file, fapl, &handle) >= 0 && handle)
    fd = *static_cast<int*>(handle);
  if (fapl >= 0) H5Pclose(fapl);
  H5Fclose(file);  // the id only: the file stays open through the dataset
  H5Eclear2(H5E_DEFAULT);
  return fd;
}

}  // namespace

namespace {

// Selects planes [first, first + count) of a (planes, ny, nx) space, or nothing.
void select_planes(hid_t space, hsize_t first, hsize_t count, hsize_t ny, hsize_t nx, const std::string& file,
                   const std::string& what) {
  if (count == 0) {
    check(H5Sselect_none(space), file, what);
    return;
  }
  const hsize_t start[3] = {first, 0, 0};
  const hsize_t counts[3] = {count, ny, nx};
  check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, counts, nullptr), file, what);
}

}  // namespace

void write_contiguous(hid_t set, hid_t memory_type, const void* values, const Grid3& grid,
                      std::size_t value_bytes, hid_t transfer, const std::string& file, const std::string& what,
                      const OutputRanks& ranks, std::size_t block_bytes) {
  const auto nx = static_cast<hsize_t>(grid.n[0]), ny = static_cast<hsize_t>(grid.n[1]);
  const auto first = static_cast<hsize_t>(ranks.first_plane()), planes = static_cast<hsize_t>(ranks.planes(grid));
  const hsize_t mine[3] = {planes, ny, nx};
  const hsize_t plane_bytes = ny * nx * value_bytes;
  const hsize_t block = planes_per_block(grid, value_bytes, block_bytes);
  const auto rounds = (static_cast<hsize_t>(ranks.most_planes(grid)) + block - 1) / block;
  const haddr_t offset = H5Dget_offset(set);
  const int fd = offset == HADDR_UNDEF ? -1 : posix_descriptor(set);
  Handle file_space(H5Dget_space(set), H5Sclose, file, what);
  Handle memory_space(H5Screate_simple(3, mine, nullptr), H5Sclose, file, what);
  for (hsize_t round = 0; round < rounds; ++round) {
    const hsize_t k = std::min(round * block, planes);
    const hsize_t count = std::min(block, planes - k);
    select_planes(file_space, first + k, count, ny, nx, file, what);
    select_planes(memory_space, k, count, ny, nx, file, what);
    check(H5Dwrite(set, memory_type, memory_space, file_space, transfer, values), file, what);
    // Start writing this block out now; fsync at the end of the snapshot waits for it. A
    // hint only: a refusal changes nothing but the speed.
    if (fd >= 0 && count > 0)
      static_cast<void>(::sync_file_range(fd, static_cast<off64_t>(offset + (first + k) * plane_bytes),
                                          static_cast<off64_t>(count * plane_bytes), SYNC_FILE_RANGE_WRITE));
  }
}

void write_planes(hid_t set, hid_t memory_type, const void* values, const Grid3& grid, const OutputRanks& ranks,
                  hid_t transfer, const std::string& file, const std::string& what) {
  const auto nx = static_cast<hsize_t>(grid.n[0]), ny = static_cast<hsize_t>(grid.n[1]);
  const auto planes = static_cast<hsize_t>(ranks.planes(grid));
  const hsize_t mine[3] = {planes, ny, nx};
  Handle file_space(H5Dget_space(set), H5Sclose, file, what);
  Handle memory_space(H5Screate_simple(3, mine, nullptr), H5Sclose, file, what);
  select_planes(file_space, static_cast<hsize_t>(ranks.first_plane()), planes, ny, nx, file, what);
  check(H5Dwrite(set, memory_type, memory_space, file_space, transfer, values), file, what);
}

}  // namespace adi3d::io::h5
