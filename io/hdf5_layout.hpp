#pragma once
// How a field's dataset is laid out on disk and moved there, chosen for large sequential
// writes (issue 38: a snapshot at >= 80% of the disk's sequential bandwidth):
//   - uncompressed: contiguous, allocated when written, never filled with a fill value
//     first (a fill would write every byte twice), so one H5Dwrite is one long write;
//   - compressed (output.compression): chunks of whole planes (or of whole rows when a
//     plane alone is larger than the chunk target), about kChunkTarget bytes each, so every
//     chunk is one large write and one plane range of the field;
//   - a conversion (a double field stored as float32) runs through a conversion buffer of
//     kConversionBuffer bytes, so HDF5 writes large strips instead of its 1 MiB default;
//   - a contiguous field is written in blocks of whole planes of about kWriteBlock bytes,
//     and the disk is asked to start writing each block out as soon as it is in the page
//     cache (sync_file_range), so the copy into the page cache and the disk's writing
//     overlap instead of following each other (write, then fsync: what dd conv=fsync
//     does). Measured on the H100 machine before this: one 4.3 GB H5Dwrite + fsync took
//     5.2 s where dd took 3.3 s; docs/performance.md#snapshots has the numbers after.
#include "io/hdf5_handles.hpp"
#include "io/output_compression.hpp"

#include <array>

namespace adi3d::io::h5 {

constexpr std::size_t kChunkTarget = 16u << 20;       // bytes per chunk of a compressed field
constexpr std::size_t kConversionBuffer = 64u << 20;  // bytes of HDF5's type-conversion buffer
constexpr std::size_t kWriteBlock = 64u << 20;        // bytes per write of a contiguous field

// The chunk (nz, ny, nx order) of a compressed field with values of `value_bytes` bytes.
std::array<hsize_t, 3> field_chunk(const Grid3& grid, std::size_t value_bytes);

// Dataset creation properties for a field (see above).
Handle field_creation(const Grid3& grid, std::size_t value_bytes, const Compression& compression,
                      const std::string& file);
// Dataset access properties: a chunk cache that holds a whole chunk (compressed fields).
Handle field_access(const Grid3& grid, std::size_t value_bytes, const std::string& file);
// Transfer properties: a large conversion buffer when memory and file types differ;
// collective MPI-IO on a file several ranks share.
Handle field_transfer(bool converts, bool collective, const std::string& file);

// The planes per write of a contiguous field (at least one) in blocks of `block_bytes`.
hsize_t planes_per_block(const Grid3& grid, std::size_t value_bytes, std::size_t block_bytes = kWriteBlock);

// Writes this rank's planes (ranks.planes; all of them for one rank) of a contiguous
// dataset `set` (created by field_creation without compression) from x-fastest values of
// `memory_type`, block by block, starting the write-out of each block (see above). On a
// shared file every rank makes the same number of (collective) writes, those with no
// planes left selecting none.
void write_contiguous(hid_t set, hid_t memory_type, const void* values, const Grid3& grid,
                      std::size_t value_bytes, hid_t transfer, const std::string& file, const std::string& what,
                      const OutputRanks& ranks = {}, std::size_t block_bytes = kWriteBlock);
// This rank's planes in one write (a chunked dataset: its filters see whole chunks).
void write_planes(hid_t set, hid_t memory_type, const void* values, const Grid3& grid, const OutputRanks& ranks,
                  hid_t transfer, const std::string& file, const std::string& what);

}  // namespace adi3d::io::h5
