// TileLineSolve (line_solve_yz_tiles.hpp): y and z lines of constant alpha solved by the
// fused step's y/z tile kernel in its plain-solve form (fused_step_kernels.cuh,
// yz_pass_kernel with kSolveOnly), 2 arrays per point.
#include "solvers/cuda/cuda_backend.cuh"
#include "solvers/cuda/cuda_check.hpp"
#include "solvers/cuda/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step_kernels.cuh"
#include "solvers/cuda/line_solve_yz_tiles.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace adi3d::cuda {
namespace {

template <class T>
using SolveKernel = void (*)(fused::SolveArgs<T>);

// The unknown nodes along a line: Dirichlet end nodes are not unknowns.
struct UnknownRange {
  int first, last;
};

template <class T>
UnknownRange unknown_range(const OperatorView<T>& op, int axis) {
  return {op.lo[axis] == BoundaryKind::dirichlet ? 1 : 0,
          op.hi[axis] == BoundaryKind::dirichlet ? op.n[axis] - 2 : op.n[axis] - 1};
}

}  // namespace

namespace {

// The plain-solve tile kernel for lines along axis (1 or 2) and chunk capacity cap.
template <class T>
SolveKernel<T> solve_kernel(int axis, int cap) {
  constexpr int L = fused::kYZLines<T>;
  return fused::with_chunk_cap(cap, [&](auto C) -> SolveKernel<T> {
    return axis == 1 ? fused::yz_pass_kernel<T, L, C.value, 1, false, true>
                     : fused::yz_pass_kernel<T, L, C.value, 2, false, true>;
  });
}

}  // namespace

template <class T>
const typename TileLineSolve<T>::Factors& TileLineSolve<T>::factors(const OperatorView<T>& op, int axis, T tau,
                                                                    int first, int last, int cap, int device,
                                                                    CUstream_st* stream) {
  const int n = op.n[axis];
  for (const Factors& f : cache_)
    if (f.device == device && f.axis == axis && f.n == n && f.lo == op.lo[axis] && f.hi == op.hi[axis] &&
        f.tau == tau && f.alpha == op.alpha[axis] && f.inv_h2 == op.inv_h2[axis])
      return f;
  cudaStream_t s = stream;
  // A handful of tau per run is the rule; past that, start over (queued solves may still
  // read the entries).
  if (cache_.size() >= 32) {
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
    cache_.clear();
  }
  Factors f{device, axis, n, op.lo[axis], op.hi[axis], tau, op.alpha[axis], op.inv_h2[axis], false, 0, 0, T(0), {}};
  int optin = 0, sms = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  f.smem = fused::with_chunk_cap(
      cap, [&](auto C) { return fused::yz_pass_smem_bytes<T, fused::kYZLines<T>, C.value, false>(last - first + 3); });
  f.fits = f.smem <= static_cast<std::size_t>(optin);
  if (f.fits) {
    const SolveKernel<T> kernel = solve_kernel<T>(axis, cap);
    ADI3D_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(f.smem)));
    int per_sm = 0;
    ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, f.smem));
    f.resident_blocks = std::max(1, per_sm) * sms;
    const std::size_t count = 3 * 32 * static_cast<std::size_t>(cap);
    std::vector<T> h(count, T(0));
    f.s = fused::tile_line_factors(op, axis, tau, first, last, cap, h.data());
    f.values = device_allocate<T>(count);
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(f.values.data(), h.data(), count * sizeof(T), cudaMemcpyHostToDevice, s));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // h is pageable and goes out of scope
  }
  cache_.push_back(std::move(f));
  return cache_.back();
}

template <class T>
bool TileLineSolve<T>::run(const OperatorView<T>& op, int axis, T tau, T* d, CUstream_st* stream) {
  if ((axis != 1 && axis != 2) || op.alpha_field || op.lo[axis] == BoundaryKind::periodic) return false;
  // Every line, those of face nodes of the other axes too (as the other line solvers):
  // over the unknowns of the line's own axis.
  UnknownRange range[3];
  for (int a = 0; a < 3; ++a) range[a] = a == axis ? unknown_range(op, a) : UnknownRange{0, op.n[a] - 1};
  const int unknowns = range[axis].last - range[axis].first + 1;
  const int cap = fused::chunk_cap(unknowns + 2);
  if (cap == 0) return false;
  // Every row a Dirichlet row, or no line: d is its own solution.
  for (int a = 0; a < 3; ++a)
    if (range[a].last < range[a].first) return true;
  int device = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  const Factors& f = factors(op, axis, tau, range[axis].first, range[axis].last, cap, device, stream);
  if (!f.fits) return false;
  constexpr int L = fused::kYZLines<T>;
  const int other = axis == 2 ? 1 : 2;
  const int tiles = (op.n[0] + L - 1) / L * (range[other].last - range[other].first + 1);
  fused::SolveArgs<T> args{};
  for (int a = 0; a < 3; ++a) {
    args.n[a] = op.n[a];
    args.first[a] = range[a].first;
    args.last[a] = range[a].last;
  }
  args.d = d;
  args.chunk_factors = f.values.data();
  args.s = f.s;
  solve_kernel<T>(axis, cap)<<<std::min(tiles, f.resident_blocks), 256, f.smem, stream>>>(args);
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}

template class TileLineSolve<float>;
template class TileLineSolve<double>;

}  // namespace adi3d::cuda
