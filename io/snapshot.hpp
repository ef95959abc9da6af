#pragma once
// What a snapshot writer receives: host copies of the fields at one step, and the
// run-wide description of the series (grid, deck, version). Writers (HDF5 + XDMF, VTK)
// implement SnapshotWriter and run on the writer thread (snapshot_queue.hpp).
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

// One node-centred field on the grid, x fastest, in float or double.
struct FieldBuffer {
  std::string name;
  bool single = false;  // float32 when true, float64 otherwise
  std::vector<float> f32;
  std::vector<double> f64;

  const void* data() const { return single ? static_cast<const void*>(f32.data()) : f64.data(); }
  std::size_t size() const { return single ? f32.size() : f64.size(); }
  double at(std::size_t i) const { return single ? f32[i] : f64[i]; }
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
