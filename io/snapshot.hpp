#pragma once
// What a snapshot writer receives: host copies of the fields at one step, and the
// run-wide description of the series (grid, deck, version). Writers (HDF5 + XDMF, VTK)
// implement SnapshotWriter and run on the writer thread (snapshot_queue.hpp).
#include "io/output_compression.hpp"
#include "io/output_ranks.hpp"
#include "solvers/grid.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d::io {

// A failed output operation: one line naming the file and the operation.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One node-centred field on the grid (or on a rank's planes of it: OutputRanks), x
// fastest, in float or double.
//
// The values live either here (f32 or f64, as readers and tests fill them) or in host
// memory another owner keeps alive (`staged`: a snapshot's pinned staging buffer, which
// the writer consumes in place instead of copying). Their type in memory may differ from
// the type stored (`single`): a double run writing float32 fields leaves the conversion to
// the writer (HDF5 converts while it writes), so no converted copy of the field is made.
struct FieldBuffer {
  std::string name;
  bool single = false;  // stored as float32 when true, float64 otherwise
  std::vector<float> f32;
  std::vector<double> f64;

  struct Staged {
    std::shared_ptr<const void> owner;  // keeps the memory alive while the field is written
    const void* values = nullptr;
    std::size_t size = 0;
    bool single = false;  // float values when true, double otherwise
  } staged;

  // The values in memory and their type (the stored type unless staged).
  const void* data() const {
    if (staged.values) return staged.values;
    return single ? static_cast<const void*>(f32.data()) : f64.data();
  }
  bool data_single() const { return staged.values ? staged.single : single; }
  std::size_t size() const {
    if (staged.values) return staged.size;
    return single ? f32.size() : f64.size();
  }
  double at(std::size_t i) const {
    if (data_single()) return static_cast<const float*>(data())[i];
    return static_cast<const double*>(data())[i];
  }
};

struct Snapshot {
  long step = 0;
  double time = 0;
  std::vector<FieldBuffer> fields;
  // Error norms against the exact solution; set only when has_error_norms.
  double error_l2 = 0, error_max = 0;
  bool has_error_norms = false;
};

struct SeriesInfo {
  Grid3 grid;
  std::string dir;        // output directory
  std::string deck_text;  // RunConfig::deck_text
  std::string version;    // "adi3d 0.1.0"
  std::string problem;    // "heat" or "poisson"
  Compression compression;  // output.compression (HDF5 snapshots)
  OutputRanks ranks;        // who writes the files together; snapshots hold this rank's planes
};

class SnapshotWriter {
 public:
  virtual ~SnapshotWriter() = default;
  // Writes one snapshot and brings the series index (XDMF, PVD) up to date; throws
  // OutputError. A failed write leaves the snapshots written before readable.
  virtual void write(const Snapshot& snapshot) = 0;
  // The files this writer maintains (for the run summary).
  virtual std::string description() const = 0;
};

// The group / file stem of a snapshot: the step, zero-padded to six digits.
std::string snapshot_label(long step);

}  // namespace adi3d::io
