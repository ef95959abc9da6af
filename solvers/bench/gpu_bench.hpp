#pragma once
// Timings of the CUDA backend's operations for `adi3d bench gpu`: every stencil variant,
// every line solver per axis, one Douglas step, and a device-to-device copy in the same
// run as the bandwidth reference. CUDA events on the backend's stream, a warm-up, then the
// median of the repetitions, each of kCallsPerTiming calls back to back (adi_bench.hpp), on
// fresh random non-zero data. No CUDA headers here.
#include <string>
#include <vector>

namespace adi3d::cuda {

struct OpTiming {
  std::string op;       // "copy", "stencil", "solve_x", "solve_y", "solve_z", "douglas_step"
  std::string variant;  // kernel variant
  double ms = 0;        // median
  double bytes = 0;     // bytes that must move (the floor of this operation)
};

// Runs every timing on an n^3 grid (Dirichlet faces, constant alpha) on device 0.
template <class T>
std::vector<OpTiming> time_backend_ops(int n, int repetitions);

}  // namespace adi3d::cuda
