#pragma once
// HDF5 snapshot series: a file per snapshot, an HDF5 index that names them all, and the
// XDMF index ParaView opens.
//
//   DIR/h5/snapshot_000010.h5  attributes time, step (and error_l2, error_max with an
//                              exact solution), origin, spacing, shape, axis_order;
//                              datasets u, error, alpha shaped (nz, ny, nx), x fastest
//   DIR/snapshots.h5           attributes origin, spacing (x, y, z), shape (nx, ny, nz),
//                              version, problem, axis_order; dataset /deck (the effective
//                              deck text); /snapshots/000010, an external link to the root
//                              of h5/snapshot_000010.h5 (HDF5 and h5py follow it, so
//                              f["snapshots/000010/u"] reads the field)
//   DIR/snapshots.xdmf         a temporal collection over the snapshot files
//
// Why a file per snapshot: HDF5 updates a file's metadata in place, so a process killed
// inside a write to a file that holds every snapshot could leave a file no reader opens,
// the snapshots already in it included (tests/io/kill_trials.py found one in 50 kills).
// Here nothing complete is ever written again: a snapshot is written under a temporary
// name, fsynced and renamed into place, and only then are the two indexes replaced
// (written whole under a temporary name, renamed). A kill at any moment leaves indexes
// that name complete files only. A snapshot dropped on a restart gives its disk space
// back. Datasets are contiguous, or chunked and filtered with output.compression
// (hdf5_layout.hpp).
//
// Distributed runs: every rank writes its planes of each snapshot file collectively
// (MPI-IO); rank 0 renames it and keeps the indexes.
#include "io/snapshot.hpp"
#include "io/xdmf_writer.hpp"

#include <optional>

namespace adi3d::io {

class Hdf5SeriesWriter final : public SnapshotWriter {
 public:
  // A new series (the snapshot files of an earlier series in DIR are removed). With
  // `resume_after_step` (a restart) an existing series on the same grid is continued:
  // snapshots after that step are dropped, the earlier ones stay and stay listed.
  explicit Hdf5SeriesWriter(SeriesInfo info, std::optional<long> resume_after_step = std::nullopt);

  void write(const Snapshot& snapshot) override;
  std::string description() const override;

  const std::string& h5_path() const { return h5_path_; }
  const std::string& xdmf_path() const { return xdmf_path_; }
  // The snapshots listed (on rank 0, which keeps the indexes).
  const std::vector<XdmfEntry>& entries() const { return entries_; }

 private:
  // Rank 0: a new series, or the old one continued (false where it is not one to continue).
  void create();
  bool resume(long after_step);
  // Removes the files in DIR/h5 that no entry names (an earlier series', a dropped
  // snapshot's, a write a kill interrupted).
  void remove_unlisted_files() const;
  // snapshots.h5 and snapshots.xdmf for entries_, each replaced atomically (rank 0).
  void write_indexes() const;

  SeriesInfo info_;
  std::string h5_path_, xdmf_path_, files_dir_;
  std::vector<XdmfEntry> entries_;
};

// The file of one snapshot, relative to the output directory: "h5/snapshot_000010.h5".
std::string snapshot_file_name(long step);

// The grid stored in a snapshot or checkpoint file's root attributes.
Grid3 read_grid_attributes(long file_id, const std::string& path);

}  // namespace adi3d::io
