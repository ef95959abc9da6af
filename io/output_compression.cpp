#include "io/output_compression.hpp"

#include "io/hdf5_handles.hpp"

namespace adi3d::io {
namespace {

// Whether this HDF5 library can write with the filter (a filter may be present for
// reading only: szip without its encoder).
bool can_encode(H5Z_filter_t filter) {
  h5::Hdf5Lock lock;  // the writer thread may be in the library
  if (H5Zfilter_avail(filter) <= 0) return false;
  unsigned config = 0;
  if (H5Zget_filter_info(filter, &config) < 0) return false;
  return (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

constexpr const char* kValid = "expected none, gzip, gzip:LEVEL (1-9) or szip";

}  // namespace

std::optional<Compression> parse_compression(const std::string& text, std::string* why) {
  Compression c;
  if (text == "none") return c;
  if (text == "szip") {
    if (!can_encode(H5Z_FILTER_SZIP)) {
      *why = "this HDF5 library has no szip encoder; use gzip or none";
      return std::nullopt;
    }
    c.kind = Compression::Kind::szip;
    return c;
  }
  if (text == "gzip" || text.rfind("gzip:", 0) == 0) {
    c.kind = Compression::Kind::gzip;
    c.level = 1;  // the fastest level: its cost is measured in docs/performance.md
    if (text != "gzip") {  // "gzip:LEVEL"
      const std::string level = text.substr(5);
      if (level.size() != 1 || level[0] < '1' || level[0] > '9') {
        *why = "gzip level '" + level + "' is not 1-9; " + kValid;
        return std::nullopt;
      }
      c.level = level[0] - '0';
    }
    if (!can_encode(H5Z_FILTER_DEFLATE) || !can_encode(H5Z_FILTER_SHUFFLE)) {
      *why = "this HDF5 library has no deflate encoder; use none";
      return std::nullopt;
    }
    return c;
  }
  *why = "unknown compression '" + text + "'; " + kValid;
  return std::nullopt;
}

std::string to_string(const Compression& c) {
  switch (c.kind) {
    case Compression::Kind::gzip: return "gzip:" + std::to_string(c.level);
    case Compression::Kind::szip: return "szip";
    case Compression::Kind::none: break;
  }
  return "none";
}

}  // namespace adi3d::io
