#include "io/checkpoint.hpp"

#include "io/hdf5_handles.hpp"
#include "io/hdf5_snapshots.hpp"
#include "io/snapshot_files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace adi3d::io {
namespace {

constexpr const char* kFormat = "adi3d checkpoint 1";

std::string grid_text(const Grid3& g) { return fmt::format("{} x {} x {}", g.n[0], g.n[1], g.n[2]); }

bool same(double a, double b) { return a == b || std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

unsigned long long fnv1a64(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  unsigned long long h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void write_checkpoint(const std::string& path, const CheckpointState& s) {
  const std::string tmp = path + ".tmp";
  const FieldBuffer& u = s.u;
  // The checksum is over the bytes stored: the values in memory must be in that type.
  if (u.name != "u" || u.single != (s.precision == Precision::f32) || u.data_single() != u.single)
    throw OutputError(tmp + ": checkpoint field is not 'u' in the run precision");
  try {
    h5::Hdf5Lock lock;
    h5::Handle file = h5::create_file(tmp);
    h5::write_attr(file, "format", std::string(kFormat), tmp);
    h5::write_attr(file, "origin", s.grid.lo, tmp);
    h5::write_attr(file, "spacing", s.grid.h, tmp);
    h5::write_attr(file, "shape", std::array<long, 3>{s.grid.n[0], s.grid.n[1], s.grid.n[2]}, tmp);
    h5::write_attr(file, "precision", std::string(to_string(s.precision)), tmp);
    h5::write_attr(file, "step", s.step, tmp);
    h5::write_attr(file, "time", s.time, tmp);
    h5::write_attr(file, "version", s.version, tmp);
    const auto sum = static_cast<long>(fnv1a64(u.data(), u.size() * (u.single ? 4 : 8)));
    h5::write_attr(file, "u_fnv1a64", sum, tmp);
    h5::write_string_dataset(file, "deck", s.deck_text, tmp);
    h5::write_field(file, u, s.grid, tmp);
    file.close(tmp, "close (flush) the checkpoint");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  commit_file(tmp, path);
}

CheckpointState read_checkpoint(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError(fmt::format("{}: no such checkpoint file", path));
  CheckpointState s;
  try {
    h5::Hdf5Lock lock;
    h5::Handle file = h5::open_file(path, false);
    if (!h5::has_attr(file, "format", path) || h5::read_attr_string(file, "format", path) != kFormat)
      throw CheckpointError(fmt::format("{}: not an adi3d checkpoint (no format '{}')", path, kFormat));
    s.grid = read_grid_attributes(file, path);
    const std::string precision = h5::read_attr_string(file, "precision", path);
    if (precision != "double" && precision != "float")
      throw CheckpointError(fmt::format("{}: unknown precision '{}'", path, precision));
    s.precision = precision == "float" ? Precision::f32 : Precision::f64;
    s.step = h5::read_attr_long(file, "step", path);
    s.time = h5::read_attr_double(file, "time", path);
    s.version = h5::read_attr_string(file, "version", path);
    s.deck_text = h5::read_string_dataset(file, "deck", path);
    for (int a = 0; a < 3; ++a)
      if (s.grid.n[a] < 1 || s.grid.n[a] > 1 << 16)
        throw CheckpointError(fmt::format("{}: bad grid shape {}", path, grid_text(s.grid)));
    const bool single = s.precision == Precision::f32;
    if (h5::dataset_float_size(file, "u", path) != (single ? 4 : 8))
      throw CheckpointError(fmt::format("{}: dataset 'u' is not stored in {}", path, precision));
    s.u.name = "u";
    s.u.single = single;
    h5::read_field(file, "u", s.grid, single, &s.u.f32, &s.u.f64, path);
    const auto expected = static_cast<unsigned long long>(h5::read_attr_long(file, "u_fnv1a64", path));
    const unsigned long long actual = fnv1a64(s.u.data(), s.u.size() * (single ? 4 : 8));
    if (actual != expected)
      throw CheckpointError(fmt::format("{}: corrupt checkpoint: checksum of u does not match", path));
  } catch (const OutputError& e) {
    throw CheckpointError(fmt::format("unreadable checkpoint: {}", e.what()));
  }
  return s;
}

std::string checkpoint_mismatch(const CheckpointState& s, const Grid3& g, Precision precision) {
  std::vector<std::string> diffs;
  if (s.grid.n != g.n)
    diffs.push_back(fmt::format("grid {} in the checkpoint, {} in the deck", grid_text(s.grid), grid_text(g)));
  for (int a = 0; a < 3 && s.grid.n == g.n; ++a)
    if (!same(s.grid.lo[a], g.lo[a]) || !same(s.grid.h[a], g.h[a])) {
      diffs.push_back(fmt::format("grid box (origin {} {} {}, spacing {} {} {}) in the checkpoint, "
                                  "(origin {} {} {}, spacing {} {} {}) in the deck",
                                  s.grid.lo[0], s.grid.lo[1], s.grid.lo[2], s.grid.h[0], s.grid.h[1],
                                  s.grid.h[2], g.lo[0], g.lo[1], g.lo[2], g.h[0], g.h[1], g.h[2]));
      break;
    }
  if (s.precision != precision)
    diffs.push_back(fmt::format("precision {} in the checkpoint, {} in the deck", to_string(s.precision),
                                to_string(precision)));
  std::string out;
  for (const std::string& d : diffs) out += (out.empty() ? "" : "; ") + d;
  return out;
}

}  // namespace adi3d::io
