#include "io/hdf5_snapshots.hpp"

#include "io/hdf5_handles.hpp"
#include "io/snapshot_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>

namespace fs = std::filesystem;

namespace adi3d::io {
namespace {

constexpr const char* kAxisOrder =
    "origin, spacing, shape: x y z; datasets: (nz, ny, nx), x fastest";

void write_grid_attributes(hid_t obj, const Grid3& g, const std::string& file) {
  h5::write_attr(obj, "origin", g.lo, file);
  h5::write_attr(obj, "spacing", g.h, file);
  h5::write_attr(obj, "shape", std::array<long, 3>{g.n[0], g.n[1], g.n[2]}, file);
  h5::write_attr(obj, "axis_order", std::string(kAxisOrder), file);
}

}  // namespace

Grid3 read_grid_attributes(long file_id, const std::string& path) {
  const hid_t f = static_cast<hid_t>(file_id);
  Grid3 g;
  g.lo = h5::read_attr_double3(f, "origin", path);
  g.h = h5::read_attr_double3(f, "spacing", path);
  const std::array<long, 3> n = h5::read_attr_long3(f, "shape", path);
  for (int a = 0; a < 3; ++a) g.n[a] = static_cast<int>(n[a]);
  return g;
}

Hdf5SeriesWriter::Hdf5SeriesWriter(SeriesInfo info, std::optional<long> resume_after_step)
    : info_(std::move(info)),
      h5_path_((fs::path(info_.dir) / "snapshots.h5").string()),
      xdmf_path_((fs::path(info_.dir) / "snapshots.xdmf").string()) {
  if (resume_after_step && fs::exists(h5_path_) && resume(*resume_after_step)) return;
  create();
}

void Hdf5SeriesWriter::create() {
  h5::Hdf5Lock lock;
  h5::Handle file = h5::create_file(h5_path_, info_.ranks);
  write_grid_attributes(file, info_.grid, h5_path_);
  h5::write_attr(file, "version", info_.version, h5_path_);
  h5::write_attr(file, "problem", info_.problem, h5_path_);
  h5::write_string_dataset(file, "deck", info_.deck_text, h5_path_);
  h5::create_group(file, "snapshots", h5_path_);
  file.close(h5_path_, "close the file");
  entries_.clear();
}

// Keeps the snapshots up to `after_step` of an existing series on the same grid; false
// when the file is not such a series (it is then replaced).
bool Hdf5SeriesWriter::resume(long after_step) {
  h5::Hdf5Lock lock;
  try {
    h5::Handle file = h5::open_file(h5_path_, true, info_.ranks);
    const Grid3 g = read_grid_attributes(file, h5_path_);
    if (g.n != info_.grid.n || g.lo != info_.grid.lo || g.h != info_.grid.h) return false;
    h5::Handle snaps = h5::open_group(file, "snapshots", h5_path_);
    std::vector<XdmfEntry> kept;
    for (const std::string& name : h5::link_names(snaps, h5_path_)) {
      h5::Handle group = h5::open_group(snaps, name, h5_path_);
      XdmfEntry e;
      e.step = h5::read_attr_long(group, "step", h5_path_);
      e.time = h5::read_attr_double(group, "time", h5_path_);
      if (e.step > after_step) {
        group.reset();
        h5::check(H5Ldelete(snaps, name.c_str(), H5P_DEFAULT), h5_path_, "drop snapshot " + name);
        continue;
      }
      e.group = "/snapshots/" + name;
      for (const char* field : {"u", "error", "alpha"})
        if (h5::has_link(group, field, h5_path_))
          e.fields.push_back({field, h5::dataset_float_size(group, field, h5_path_) == 4});
      kept.push_back(std::move(e));
    }
    std::sort(kept.begin(), kept.end(), [](const XdmfEntry& a, const XdmfEntry& b) { return a.step < b.step; });
    file.close(h5_path_, "close the file");
    entries_ = std::move(kept);
  } catch (const OutputError&) {
    return false;
  }
  if (info_.ranks.rank() == 0) write_text_atomically(xdmf_path_, xdmf_document(info_.grid, "snapshots.h5", entries_));
  return true;
}

void Hdf5SeriesWriter::write(const Snapshot& s) {
  const std::string label = snapshot_label(s.step);
  XdmfEntry entry{s.step, s.time, "/snapshots/" + label, {}};
  const OutputRanks& ranks = info_.ranks;
  std::exception_ptr failure;
  try {
    {
      h5::Hdf5Lock lock;
      h5::Handle file = h5::open_file(h5_path_, true, ranks);
      h5::Handle snaps = h5::open_group(file, "snapshots", h5_path_);
      if (h5::has_link(snaps, label, h5_path_))
        h5::check(H5Ldelete(snaps, label.c_str(), H5P_DEFAULT), h5_path_, "replace snapshot " + label);
      h5::Handle group = h5::create_group(snaps, label, h5_path_);
      h5::write_attr(group, "time", s.time, h5_path_);
      h5::write_attr(group, "step", s.step, h5_path_);
      if (s.has_error_norms) {
        h5::write_attr(group, "error_l2", s.error_l2, h5_path_);
        h5::write_attr(group, "error_max", s.error_max, h5_path_);
      }
      for (const FieldBuffer& f : s.fields) {
        h5::write_field(group, f, info_.grid, h5_path_, info_.compression, ranks);
        entry.fields.push_back({f.name, f.single});
      }
      group.reset();
      snaps.reset();
      // A shared file reaches the disk from every rank's node by MPI-IO's sync.
      if (ranks.shared()) h5::flush_file(file, h5_path_);
      // Closing the file flushes it: a failure here (a full disk) is a failed snapshot.
      file.close(h5_path_, "close (flush) the file after snapshot " + label);
    }
    // On the disk before the index names it, and before the writer takes the next
    // snapshot: the writer's pace is then the disk's (which is what stepping waits for when
    // it falls behind), not the page cache's, and dirty pages never pile up in host memory.
    if (!ranks.shared()) fsync_file(h5_path_);
  } catch (...) {
    failure = std::current_exception();
  }
  // Every rank knows whether the snapshot is whole before rank 0 indexes it.
  if (any_rank_failed(ranks, failure != nullptr)) {
    if (failure) std::rethrow_exception(failure);
    throw OutputError(fmt::format("{}: snapshot {} failed on another rank", h5_path_, label));
  }
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const XdmfEntry& e) { return e.step >= s.step; }),
                 entries_.end());
  entries_.push_back(std::move(entry));
  if (ranks.rank() == 0) write_text_atomically(xdmf_path_, xdmf_document(info_.grid, "snapshots.h5", entries_));
}

std::string Hdf5SeriesWriter::description() const { return h5_path_ + " + " + xdmf_path_; }

}  // namespace adi3d::io
