#include "io/checkpoint.hpp"

#include "io/hdf5_handles.hpp"
#include "io/hdf5_layout.hpp"
#include "io/hdf5_probe.hpp"
#include "io/hdf5_snapshots.hpp"
#include "io/snapshot_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <type_traits>

namespace adi3d::io {
namespace {

// Format 2 keeps a checksum per z plane of u ("u_plane_fnv1a64"), which the ranks of a
// distributed run form for their own planes; format 1 (one checksum over all of u) is
// still read.
constexpr const char* kFormat = "adi3d checkpoint 2";
constexpr const char* kFormatWholeSum = "adi3d checkpoint 1";
constexpr const char* kPlaneSums = "u_plane_fnv1a64";

std::string grid_text(const Grid3& g) { return fmt::format("{} x {} x {}", g.n[0], g.n[1], g.n[2]); }

bool same(double a, double b) { return a == b || std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

// The checksum of each z plane of x-fastest values (`count` planes of `plane_bytes`).
std::vector<long> plane_sums(const void* values, std::size_t count, std::size_t plane_bytes) {
  std::vector<long> sums(count);
  const auto* bytes = static_cast<const unsigned char*>(values);
  for (std::size_t k = 0; k < count; ++k) sums[k] = static_cast<long>(fnv1a64(bytes + k * plane_bytes, plane_bytes));
  return sums;
}

// The plane checksums as a 1D dataset of nz values, each rank writing its own planes'.
void write_plane_sums(hid_t file, const std::vector<long>& mine, const Grid3& grid, const OutputRanks& ranks,
                      const std::string& path) {
  const std::string what = std::string("write dataset '") + kPlaneSums + "'";
  const hsize_t nz = static_cast<hsize_t>(grid.n[2]), count = mine.size();
  h5::Handle space(H5Screate_simple(1, &nz, nullptr), H5Sclose, path, what);
  h5::Handle memory(H5Screate_simple(1, &count, nullptr), H5Sclose, path, what);
  h5::Handle set(H5Dcreate2(file, kPlaneSums, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, path, what);
  const hsize_t first = static_cast<hsize_t>(ranks.first_plane());
  if (count > 0)
    h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, nullptr, &count, nullptr), path, what);
  else
    h5::check(H5Sselect_none(space), path, what);
  h5::Handle dxpl = h5::field_transfer(false, ranks.shared(), path);
  h5::check(H5Dwrite(set, H5T_NATIVE_INT64, memory, space, dxpl, mine.data()), path, what);
  set.close(path, what);
}

std::vector<long> read_plane_sums(hid_t file, const Grid3& grid, const std::string& path) {
  const std::string what = std::string("read dataset '") + kPlaneSums + "'";
  h5::Handle set(H5Dopen2(file, kPlaneSums, H5P_DEFAULT), H5Dclose, path, what);
  h5::Handle space(H5Dget_space(set), H5Sclose, path, what);
  if (H5Sget_simple_extent_npoints(space) != grid.n[2])
    throw CheckpointError(fmt::format("{}: {} holds {} checksums for {} planes", path, kPlaneSums,
                                      H5Sget_simple_extent_npoints(space), grid.n[2]));
  std::vector<long> sums(static_cast<std::size_t>(grid.n[2]));
  h5::check(H5Dread(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, sums.data()), path, what);
  return sums;
}

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

void write_checkpoint(const std::string& path, const CheckpointState& s, const OutputRanks& ranks) {
  const std::string tmp = path + ".tmp";
  const FieldBuffer& u = s.u;
  // The checksums are over the bytes stored: the values in memory must be in that type.
  if (u.name != "u" || u.single != (s.precision == Precision::f32) || u.data_single() != u.single)
    throw OutputError(tmp + ": checkpoint field is not 'u' in the run precision");
  std::exception_ptr failure;
  try {
    h5::Hdf5Lock lock;
    h5::Handle file = h5::create_file(tmp, ranks);
    h5::write_attr(file, "format", std::string(kFormat), tmp);
    h5::write_attr(file, "origin", s.grid.lo, tmp);
    h5::write_attr(file, "spacing", s.grid.h, tmp);
    h5::write_attr(file, "shape", std::array<long, 3>{s.grid.n[0], s.grid.n[1], s.grid.n[2]}, tmp);
    h5::write_attr(file, "precision", std::string(to_string(s.precision)), tmp);
    h5::write_attr(file, "step", s.step, tmp);
    h5::write_attr(file, "time", s.time, tmp);
    h5::write_attr(file, "version", s.version, tmp);
    const std::size_t plane_bytes = static_cast<std::size_t>(s.grid.n[0]) * s.grid.n[1] * (u.single ? 4 : 8);
    write_plane_sums(file, plane_sums(u.data(), static_cast<std::size_t>(ranks.planes(s.grid)), plane_bytes),
                     s.grid, ranks, tmp);
    h5::write_string_dataset(file, "deck", s.deck_text, tmp);
    h5::write_field(file, u, s.grid, tmp, {}, ranks);
    if (ranks.shared()) h5::flush_file(file, tmp);
    file.close(tmp, "close (flush) the checkpoint");
  } catch (...) {
    failure = std::current_exception();
  }
  // The rename only once every rank's planes are in: else the good checkpoint stays.
  const bool failed = any_rank_failed(ranks, failure != nullptr);
  if (ranks.rank() == 0 && failed) std::remove(tmp.c_str());
  if (failure) std::rethrow_exception(failure);
  if (failed) throw OutputError(fmt::format("{}: the checkpoint failed on another rank", tmp));
  if (ranks.rank() == 0) commit_file(tmp, path);
  // No rank reports the checkpoint written before it is in place.
  if (ranks.shared()) ranks.comm->barrier();
}

namespace {

// The checkpoint's description, and with `values` u itself, verified.
// u reduced to the listed planes of `plane` values each, in that order.
void keep_planes(FieldBuffer& u, const std::vector<int>& planes, std::size_t plane) {
  const auto pick = [&](auto& values) {
    std::remove_reference_t<decltype(values)> kept(planes.size() * plane);
    for (std::size_t q = 0; q < planes.size(); ++q)
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(planes[q]) * plane), plane,
                  kept.begin() + static_cast<std::ptrdiff_t>(q * plane));
    values.swap(kept);
  };
  if (u.single)
    pick(u.f32);
  else
    pick(u.f64);
}

CheckpointState read_checkpoint_parts(const std::string& path, bool values, const std::vector<int>* planes = nullptr) {
  CheckpointState s;
  try {
    h5::Hdf5Lock lock;
    h5::Handle file = h5::open_file(path, false);
    const std::string format = h5::has_attr(file, "format", path) ? h5::read_attr_string(file, "format", path) : "";
    if (format != kFormat && format != kFormatWholeSum)
      throw CheckpointError(fmt::format("{}: not an adi3d checkpoint (no format '{}')", path, kFormat));
    s.grid = read_grid_attributes(file, path);
    const std::string precision = h5::read_attr_string(file, "precision", path);
    if (precision != "double" && precision != "float")
      throw CheckpointError(fmt::format("{}: unknown precision '{}'", path, precision));
    s.precision = precision == "float" ? Precision::f32 : Precision::f64;
    s.path = path;
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
    if (!values) return s;
    const std::size_t value_bytes = single ? 4 : 8;
    const std::size_t plane_bytes = static_cast<std::size_t>(s.grid.n[0]) * s.grid.n[1] * value_bytes;
    if (format == kFormatWholeSum) {
      h5::read_field(file, "u", s.grid, single, &s.u.f32, &s.u.f64, path);
      const auto expected = static_cast<unsigned long long>(h5::read_attr_long(file, "u_fnv1a64", path));
      const unsigned long long actual = fnv1a64(s.u.data(), s.u.size() * value_bytes);
      if (actual != expected)
        throw CheckpointError(fmt::format("{}: corrupt checkpoint: checksum of u does not match", path));
      if (planes) keep_planes(s.u, *planes, plane_bytes / value_bytes);
    } else {
      h5::read_field(file, "u", s.grid, single, &s.u.f32, &s.u.f64, path, planes);
      const std::vector<long> expected = read_plane_sums(file, s.grid, path);
      const std::size_t count = planes ? planes->size() : expected.size();
      const std::vector<long> actual = plane_sums(s.u.data(), count, plane_bytes);
      for (std::size_t q = 0; q < count; ++q) {
        const std::size_t k = planes ? static_cast<std::size_t>((*planes)[q]) : q;
        if (actual[q] != expected[k])
          throw CheckpointError(
              fmt::format("{}: corrupt checkpoint: checksum of u does not match in plane z = {}", path, k));
      }
    }
    if (planes) s.planes = *planes;
  } catch (const OutputError& e) {
    throw CheckpointError(fmt::format("unreadable checkpoint: {}", e.what()));
  }
  return s;
}

}  // namespace

namespace {

// The first look at a user's file runs in a forked child (hdf5_probe.hpp).
void look_first(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError(fmt::format("{}: no such checkpoint file", path));
  const std::string crash = crash_in_child([&] { read_checkpoint_parts(path, false); });
  if (!crash.empty())
    throw CheckpointError(fmt::format("{}: damaged checkpoint: reading it ended in {} inside HDF5", path, crash));
}

}  // namespace

CheckpointState read_checkpoint(const std::string& path) {
  look_first(path);
  return read_checkpoint_parts(path, true);
}

CheckpointState read_checkpoint(const std::string& path, const std::vector<int>& planes) {
  look_first(path);
  return read_checkpoint_parts(path, true, &planes);
}

CheckpointState read_checkpoint_header(const std::string& path) {
  look_first(path);
  return read_checkpoint_parts(path, false);
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
