#pragma once
// Checkpoints: the full state of a heat run in one HDF5 file (DIR/checkpoint.h5), enough
// to continue bit for bit: u in the run's precision, step, time, the grid, the precision,
// the deck text and the program version. Written to a temporary name, closed (flushed),
// fsynced and renamed, so an interrupted write never replaces a good checkpoint with a
// bad one. A checksum of each plane of u catches a corrupted file on reading. The file is
// the same whichever number of ranks wrote it, so a run restarts on any number.
#include "io/output_ranks.hpp"
#include "io/run_config.hpp"
#include "io/snapshot.hpp"

#include <string>
#include <vector>

namespace adi3d::io {

// A checkpoint that cannot be used: unreadable, corrupt, or for another grid/precision.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointState {
  std::string path;  // the file it was read from (empty: not read)
  Grid3 grid;
  Precision precision = Precision::f64;
  long step = 0;
  double time = 0;
  std::string deck_text;
  std::string version;
  FieldBuffer u;  // named "u"; u.single exactly when precision is f32
  // The z planes u holds, in this order (read_checkpoint's `planes`); empty: all of them.
  std::vector<int> planes;
};

// Writes atomically to `path`; throws OutputError naming the file and the operation. On
// several ranks (ranks.shared()) every rank calls it with its planes of u, and they write
// the one file together; it is renamed into place once all have written theirs.
void write_checkpoint(const std::string& path, const CheckpointState& state, const OutputRanks& ranks = {});

// Reads and verifies (layout, shape, checksum); throws CheckpointError with one line.
CheckpointState read_checkpoint(const std::string& path);
// The same with u's z planes `planes` only (a rank's slab and its ghost planes, in the
// slab's order), each checked against its own checksum: a restart on several ranks reads
// and holds each rank's part, not the whole field on every rank. A format-1 checkpoint
// (one checksum of the whole field) is read whole to be checked.
CheckpointState read_checkpoint(const std::string& path, const std::vector<int>& planes);
// Everything but u (whose size is all that is checked): what a restart checks against the
// deck before it knows its ranks' planes.
CheckpointState read_checkpoint_header(const std::string& path);

// "" when the checkpoint fits the run, else what differs, e.g.
// "grid 17 x 17 x 17 in the checkpoint, 9 x 9 x 9 in the deck".
std::string checkpoint_mismatch(const CheckpointState& state, const Grid3& grid, Precision precision);

// 64-bit FNV-1a over bytes (the checkpoint's checksum of u).
unsigned long long fnv1a64(const void* data, std::size_t bytes);

}  // namespace adi3d::io
