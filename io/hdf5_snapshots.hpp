#pragma once
// HDF5 snapshot series: one file per run (DIR/snapshots.h5) and its XDMF index
// (DIR/snapshots.xdmf).
//
//   /                 attributes origin, spacing (x, y, z), shape (nx, ny, nz), version,
//                     problem, axis_order; dataset /deck (the effective deck text)
//   /snapshots/000010 attributes time, step (and error_l2, error_max with an exact
//                     solution); datasets u, error, alpha shaped (nz, ny, nx), x fastest
//
// The file is opened, extended, closed and fsynced for every snapshot, so between
// snapshots it is always complete on disk; the XDMF file is then replaced atomically, so a
// crash at any point leaves a series ParaView can read. Datasets are contiguous, or
// chunked and filtered with output.compression (hdf5_layout.hpp).
#include "io/snapshot.hpp"
#include "io/xdmf_writer.hpp"

#include <optional>

namespace adi3d::io {

class Hdf5SeriesWriter final : public SnapshotWriter {
 public:
  // A new series (an old file is replaced). With `resume_after_step` (a restart) an
  // existing series on the same grid is continued: snapshots after that step are
  // dropped, the earlier ones stay and stay listed.
  explicit Hdf5SeriesWriter(SeriesInfo info, std::optional<long> resume_after_step = std::nullopt);

  void write(const Snapshot& snapshot) override;
  std::string description() const override;

  const std::string& h5_path() const { return h5_path_; }
  const std::string& xdmf_path() const { return xdmf_path_; }
  const std::vector<XdmfEntry>& entries() const { return entries_; }

 private:
  void create();
  bool resume(long after_step);

  SeriesInfo info_;
  std::string h5_path_, xdmf_path_;
  std::vector<XdmfEntry> entries_;
};

// The grid stored in a snapshot or checkpoint file's root attributes.
Grid3 read_grid_attributes(long file_id, const std::string& path);

}  // namespace adi3d::io
