// TileLineSolve (line_solve_yz_tiles.hpp): y and z lines of constant alpha between
// Dirichlet faces solved by the fused step's y/z tile kernel in its plain-solve form
// (fused_step_kernels.cuh, yz_pass_kernel with kSolveOnly), 2 arrays per point.
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
using PassKernel = void (*)(fused::PassArgs<T>);

}  // namespace

template <class T>
const typename TileLineSolve<T>::Factors& TileLineSolve<T>::factors(const OperatorView<T>& op, int axis, T tau,
                                                                    int cap, int device, CUstream_st* stream) {
  const int n = op.n[axis];
  for (const Factors& f : cache_)
    if (f.device == device && f.axis == axis && f.n == n && f.tau == tau && f.alpha == op.alpha[axis] &&
        f.inv_h2 == op.inv_h2[axis])
      return f;
  cudaStream_t s = stream;
  // A handful of tau per run is the rule; past that, start over (queued solves may still
  // read the entries).
  if (cache_.size() >= 32) {
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
    cache_.clear();
  }
  const std::size_t count = fused::pass_factor_count(n, cap);
  std::vector<T> h(count, T(0));
  Factors f{device, axis, n, tau, op.alpha[axis], op.inv_h2[axis], fused::pass_factors(op, axis, tau, cap, h.data()),
            device_allocate<T>(count)};
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(f.values.data(), h.data(), count * sizeof(T), cudaMemcpyHostToDevice, s));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // h is pageable and goes out of scope
  cache_.push_back(std::move(f));
  return cache_.back();
}

template <class T>
bool TileLineSolve<T>::run(const OperatorView<T>& op, int axis, T tau, T* d, CUstream_st* stream) {
  if ((axis != 1 && axis != 2) || op.alpha_field) return false;
  for (int a = 0; a < 3; ++a)
    if (op.lo[a] != BoundaryKind::dirichlet || op.hi[a] != BoundaryKind::dirichlet) return false;
  const int n = op.n[axis];
  const int cap = fused::chunk_cap(n);
  if (cap == 0) return false;
  // Without interior lines every row is a Dirichlet row: d is its own solution.
  if (op.n[0] < 3 || op.n[1] < 3 || op.n[2] < 3) return true;
  int device = 0, optin = 0, sms = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr int L = fused::kYZLines<T>;
  const std::size_t smem =
      fused::with_chunk_cap(cap, [&](auto C) { return fused::yz_pass_smem_bytes<T, L, C.value, false>(n); });
  if (smem > static_cast<std::size_t>(optin)) return false;
  const Factors& f = factors(op, axis, tau, cap, device, stream);
  const PassKernel<T> kernel = fused::with_chunk_cap(cap, [&](auto C) -> PassKernel<T> {
    return axis == 1 ? fused::yz_pass_kernel<T, L, C.value, 1, false, true>
                     : fused::yz_pass_kernel<T, L, C.value, 2, false, true>;
  });
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, smem));
  const int other_n = axis == 2 ? op.n[1] : op.n[2];
  const int tiles = (op.n[0] + L - 1) / L * (other_n - 2);
  const int blocks = std::min(tiles, std::max(1, per_sm) * sms);
  fused::PassArgs<T> args{};
  for (int a = 0; a < 3; ++a) args.n[a] = op.n[a];
  args.d = d;
  args.factors = f.values.data();
  args.chunk_factors = f.values.data() + 3 * n;
  args.s = f.s;
  kernel<<<blocks, 256, smem, stream>>>(args);
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}

template class TileLineSolve<float>;
template class TileLineSolve<double>;

}  // namespace adi3d::cuda
