#pragma once
// The fused Douglas step of the CUDA backend (DESIGN.md §3, "fusion is where the speed
// is"): three passes instead of five for constant alpha and Dirichlet data that does not
// move. Plain C++ (no CUDA headers): the stream is the runtime's opaque CUstream_st*.
#include "solvers/array.hpp"
#include "solvers/operator_view.hpp"

#include <vector>

struct CUstream_st;

namespace adi3d::cuda {

// Lines per shared-memory tile of the fused kernels: 32 floats or 16 doubles make one
// 128-byte row segment for the y and z tiles. Untuned guess for sm_90. Measured (H100,
// 512^3 float, ncu, 2026-11-23): x pass 1.29 ms, y 0.67 ms, z 0.86 ms, DRAM bytes at the
// floor; the 74 KB tile allows 3 blocks per SM (36% warps active) and one warp per block
// runs the serial sweep, so the passes are latency-bound, not bandwidth-bound.
template <class T>
struct FusedStepPolicy {
  static constexpr int lines = sizeof(T) == 4 ? 32 : 16;
  static constexpr int threads = 256;
};

template <class T>
class FusedDouglasStep {
 public:
  // True when the fused path covers this operator: constant alpha, every face Dirichlet,
  // and lines short enough for a shared-memory tile on this device.
  bool applies(const OperatorView<T>& op, int device) const;
  // u += du of one Douglas step with rhs dt (A u + f) (f may be null) and implicit
  // factors (I - tau A_axis); d is a grid-sized scratch. Returns false, launching nothing,
  // where applies() is false.
  bool run(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, CUstream_st* stream);

 private:
  // Thomas factors of the interior rows per axis (inv, a*inv, cp; 3 n values per axis),
  // on the host and on the device; re-uploaded only when they change.
  std::vector<T> host_factors_;
  Array<T> factors_;
};

}  // namespace adi3d::cuda
