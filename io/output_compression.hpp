#pragma once
// output.compression: an HDF5 filter for snapshot datasets, lossless, off by default.
//   none        contiguous datasets, written in one large write (the fast path)
//   gzip[:L]    shuffle + deflate (zlib) at level L = 1..9 (default 1), in chunks of whole planes
//   szip        shuffle-free szip (libaec's encoder, nearest-neighbour coding), same chunks
// Only filters Debian's libhdf5 ships are offered; one this HDF5 cannot encode with is a
// deck error. Checkpoints are never compressed (they are exact either way: every filter
// here is lossless; they stay contiguous so that a restart reads them at disk speed).
#include <optional>
#include <string>

namespace adi3d::io {

struct Compression {
  enum class Kind { none, gzip, szip };
  Kind kind = Kind::none;
  int level = 0;  // gzip's deflate level (1..9)

  bool on() const { return kind != Kind::none; }
};

// The value of output.compression, or nullopt with `why` set to what would be valid
// (including "this HDF5 has no szip encoder" where that is the reason).
std::optional<Compression> parse_compression(const std::string& text, std::string* why);

// "none", "gzip:1", "szip": the text parse_compression reads back.
std::string to_string(const Compression& c);

}  // namespace adi3d::io
