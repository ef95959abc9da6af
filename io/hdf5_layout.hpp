#pragma once
// How a field's dataset is laid out on disk and moved there, chosen for large sequential
// writes (issue 38: a snapshot at >= 80% of the disk's sequential bandwidth):
//   - uncompressed: contiguous, allocated when written, never filled with a fill value
//     first (a fill would write every byte twice), so one H5Dwrite is one long write;
//   - compressed (output.compression): chunks of whole planes (or of whole rows when a
//     plane alone is larger than the chunk target), about kChunkTarget bytes each, so every
//     chunk is one large write and one plane range of the field;
//   - a conversion (a double field stored as float32) runs through a conversion buffer of
//     kConversionBuffer bytes, so HDF5 writes large strips instead of its 1 MiB default.
#include "io/hdf5_handles.hpp"
#include "io/output_compression.hpp"

#include <array>

namespace adi3d::io::h5 {

constexpr std::size_t kChunkTarget = 16u << 20;       // bytes per chunk of a compressed field
constexpr std::size_t kConversionBuffer = 64u << 20;  // bytes of HDF5's type-conversion buffer

// The chunk (nz, ny, nx order) of a compressed field with values of `value_bytes` bytes.
std::array<hsize_t, 3> field_chunk(const Grid3& grid, std::size_t value_bytes);

// Dataset creation properties for a field (see above).
Handle field_creation(const Grid3& grid, std::size_t value_bytes, const Compression& compression,
                      const std::string& file);
// Dataset access properties: a chunk cache that holds a whole chunk (compressed fields).
Handle field_access(const Grid3& grid, std::size_t value_bytes, const std::string& file);
// Transfer properties: a large conversion buffer when memory and file types differ.
Handle field_transfer(bool converts, const std::string& file);

}  // namespace adi3d::io::h5
