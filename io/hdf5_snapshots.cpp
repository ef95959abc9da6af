#include "io/hdf5_snapshots.hpp"

#include "io/hdf5_handles.hpp"
#include "io/snapshot_files.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <system_error>

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

std::string snapshot_file_name(long step) { return "h5/snapshot_" + snapshot_label(step) + ".h5"; }

Hdf5SeriesWriter::Hdf5SeriesWriter(SeriesInfo info, std::optional<long> resume_after_step)
    : info_(std::move(info)),
      h5_path_((fs::path(info_.dir) / "snapshots.h5").string()),
      xdmf_path_((fs::path(info_.dir) / "snapshots.xdmf").string()),
      files_dir_((fs::path(info_.dir) / "h5").string()) {
  // Every rank, so that none opens a file in it before it exists (each call is harmless
  // where another rank made it first).
  std::error_code ec;
  fs::create_directories(files_dir_, ec);
  if (ec) throw OutputError(fmt::format("{}: cannot create the directory: {}", files_dir_, ec.message()));
  // Rank 0 keeps the indexes: it continues the old series or starts a new one, and every
  // rank learns whether that worked before any of them writes a snapshot.
  std::exception_ptr failure;
  if (info_.ranks.rank() == 0) {
    try {
      if (!(resume_after_step && fs::exists(h5_path_) && resume(*resume_after_step))) create();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (any_rank_failed(info_.ranks, failure != nullptr)) {
    if (failure) std::rethrow_exception(failure);
    throw OutputError(fmt::format("{}: the series could not be started (rank 0)", h5_path_));
  }
}

void Hdf5SeriesWriter::create() {
  entries_.clear();
  remove_unlisted_files();
  write_indexes();
}

// Keeps the snapshots up to `after_step` of an existing series on the same grid; false
// when the index is not such a series (it is then replaced). Rank 0.
bool Hdf5SeriesWriter::resume(long after_step) {
  std::vector<XdmfEntry> kept;
  try {
    h5::Hdf5Lock lock;
    h5::Handle index = h5::open_file(h5_path_, false);
    const Grid3 g = read_grid_attributes(index, h5_path_);
    if (g.n != info_.grid.n || g.lo != info_.grid.lo || g.h != info_.grid.h) return false;
    h5::Handle snaps = h5::open_group(index, "snapshots", h5_path_);
    for (const std::string& name : h5::link_names(snaps, h5_path_)) {
      // A series written before snapshots had files of their own: begin a new one.
      if (!h5::is_external_link(snaps, name, h5_path_)) return false;
      XdmfEntry e;
      e.step = std::stol(name);
      e.file = snapshot_file_name(e.step);
      if (e.step > after_step) continue;
      const std::string path = (fs::path(info_.dir) / e.file).string();
      try {
        h5::Handle file = h5::open_file(path, false);
        e.time = h5::read_attr_double(file, "time", path);
        for (const char* field : {"u", "error", "alpha"})
          if (h5::has_link(file, field, path))
            e.fields.push_back({field, h5::dataset_float_size(file, field, path) == 4});
      } catch (const OutputError& missing) {  // removed or damaged since: the others stay listed
        spdlog::warn("output: snapshot {} of the series is left out: {}", name, missing.what());
        continue;
      }
      kept.push_back(std::move(e));
    }
  } catch (const OutputError&) {
    return false;
  } catch (const std::logic_error&) {  // a link name that is no step (std::stol)
    return false;
  }
  std::sort(kept.begin(), kept.end(), [](const XdmfEntry& a, const XdmfEntry& b) { return a.step < b.step; });
  entries_ = std::move(kept);
  remove_unlisted_files();
  write_indexes();
  return true;
}

void Hdf5SeriesWriter::remove_unlisted_files() const {
  const auto listed = [this](const fs::path& name) {
    return std::any_of(entries_.begin(), entries_.end(),
                       [&](const XdmfEntry& e) { return fs::path(e.file).filename() == name; });
  };
  std::error_code ec;
  for (const fs::directory_entry& f : fs::directory_iterator(files_dir_, ec)) {
    const fs::path name = f.path().filename();
    // Only the files this writer makes: anything else a user put there stays.
    if (name.string().rfind("snapshot_", 0) != 0 || (name.extension() != ".h5" && name.extension() != ".tmp")) continue;
    if (!listed(name)) fs::remove(f.path(), ec);
  }
}

void Hdf5SeriesWriter::write_indexes() const {
  const std::string tmp = h5_path_ + ".tmp";
  {
    h5::Hdf5Lock lock;
    h5::Handle index = h5::create_file(tmp);
    write_grid_attributes(index, info_.grid, tmp);
    h5::write_attr(index, "version", info_.version, tmp);
    h5::write_attr(index, "problem", info_.problem, tmp);
    h5::write_string_dataset(index, "deck", info_.deck_text, tmp);
    h5::Handle snaps = h5::create_group(index, "snapshots", tmp);
    for (const XdmfEntry& e : entries_) h5::create_external_link(snaps, snapshot_label(e.step), e.file, tmp);
    snaps.reset();
    index.close(tmp, "close the file");
  }
  commit_file(tmp, h5_path_);
  write_text_atomically(xdmf_path_, xdmf_document(info_.grid, entries_));
}

void Hdf5SeriesWriter::write(const Snapshot& s) {
  XdmfEntry entry{s.step, s.time, snapshot_file_name(s.step), {}};
  const std::string path = (fs::path(info_.dir) / entry.file).string();
  const std::string tmp = path + ".tmp";
  const OutputRanks& ranks = info_.ranks;
  std::exception_ptr failure;
  try {
    h5::Hdf5Lock lock;
    h5::Handle file = h5::create_file(tmp, ranks);
    h5::write_attr(file, "time", s.time, tmp);
    h5::write_attr(file, "step", s.step, tmp);
    if (s.has_error_norms) {
      h5::write_attr(file, "error_l2", s.error_l2, tmp);
      h5::write_attr(file, "error_max", s.error_max, tmp);
    }
    write_grid_attributes(file, info_.grid, tmp);
    for (const FieldBuffer& f : s.fields) {
      h5::write_field(file, f, info_.grid, tmp, info_.compression, ranks);
      entry.fields.push_back({f.name, f.single});
    }
    // A shared file reaches the disk from every rank's node by MPI-IO's sync.
    if (ranks.shared()) h5::flush_file(file, tmp);
    // Closing the file flushes it: a failure here (a full disk) is a failed snapshot.
    file.close(tmp, "close (flush) snapshot " + snapshot_label(s.step));
  } catch (...) {
    failure = std::current_exception();
  }
  // Every rank knows whether the snapshot is whole before rank 0 renames and indexes it.
  const bool failed = any_rank_failed(ranks, failure != nullptr);
  if (ranks.rank() == 0 && failed) std::remove(tmp.c_str());
  if (failure) std::rethrow_exception(failure);
  if (failed) throw OutputError(fmt::format("{}: snapshot {} failed on another rank", path, snapshot_label(s.step)));
  std::exception_ptr indexing;
  if (ranks.rank() == 0) {
    try {
      // On the disk before the indexes name it, and before the writer takes the next
      // snapshot: the writer's pace is then the disk's (which is what stepping waits for
      // when it falls behind), not the page cache's, and dirty pages never pile up in
      // host memory.
      commit_file(tmp, path);
      const auto later = [&](const XdmfEntry& e) { return e.step >= s.step; };
      entries_.erase(std::remove_if(entries_.begin(), entries_.end(), later), entries_.end());
      entries_.push_back(std::move(entry));
      write_indexes();
    } catch (...) {
      indexing = std::current_exception();
    }
  }
  // No rank reports the snapshot written before it is in place and listed.
  if (any_rank_failed(ranks, indexing != nullptr)) {
    if (indexing) std::rethrow_exception(indexing);
    throw OutputError(fmt::format("{}: snapshot {} could not be listed (rank 0)", h5_path_, snapshot_label(s.step)));
  }
}

std::string Hdf5SeriesWriter::description() const {
  return fmt::format("{} + {} (a file per snapshot in {})", h5_path_, xdmf_path_, files_dir_);
}

}  // namespace adi3d::io
