// WarpLineSolve (line_solve_warp.hpp): y and z lines solved by the fused step's y/z
// tile kernels in their plain-solve form: constant alpha by yz_pass_kernel
// (fused_step_kernels.cuh), an alpha field by yz_var_kernel (fused_step_var_kernels.cuh),
// both with kSolveOnly; x lines by x_line_kernel (x_line_kernel.cuh), of an alpha field by
// x_line_var_kernel (x_line_var_kernel.cuh).
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_limits.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_var_kernels.cuh"
#include "solvers/cuda/line_solves/line_solve_warp.hpp"
#include "solvers/cuda/line_solves/x_line_kernel.cuh"
#include "solvers/cuda/line_solves/x_line_var_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

namespace adi3d::cuda {
namespace {

template <class T>
using SolveKernel = void (*)(fused::SolveArgs<T>);

// The plain-solve kernel for lines along axis, chunk capacity cap and n nodes (counting
// the end nodes), its threads per block and its dynamic shared memory. The y/z tiles take
// one buffer of 8 warps, but some take the fused step's two-buffer shape
// (fused::kTwoTileShape: the next tile's copy in flight; 16 warps in float, 8 in double,
// two lines per warp solve) where it gains (kPlainTwoTiles) and fits in optin bytes
// (double lines of 771-802 nodes keep one buffer): float lines of 290-546 nodes (C = 17;
// two buffers of 8 warps alone ran the same as one within the spread of H100 runs at
// 512^3, float y 0.423-0.457 ms against 0.428, and slower at 256^3, 0.069 against 0.064
// with C = 9), double lines of 547-802 (640^3, H100, bench gpu: y 1.683 -> 1.530 ms, z
// 1.902 -> 1.795), not float lines of 547-802 (two blocks of one buffer per SM: y 0.814,
// z 0.930 ms; two buffers 0.816, 0.951).
template <class T, int C>
constexpr bool kPlainTwoTiles = fused::kTwoTileShape<T, C> && (sizeof(T) == 8 || C == 17);
template <class T>
struct SolveLaunch {
  SolveKernel<T> kernel;
  int threads;
  std::size_t smem;
};
// cyclic: the kernels of cyclic lines (kCyclic), the same shapes.
template <class T>
SolveLaunch<T> solve_launch(int axis, int cap, int n, std::size_t optin, bool cyclic) {
  constexpr int L = fused::kYZLines<T>;
  auto launch = [&](auto C, auto kCyclic) -> SolveLaunch<T> {
    constexpr int c = C.value;
    constexpr bool Y = kCyclic.value;
    if (axis == 0) return {fused::x_line_kernel<T, c, Y>, 256, fused::x_line_smem_bytes<T, c>()};
    if constexpr (kPlainTwoTiles<T, c>) {
      const std::size_t smem = fused::yz_pass_smem_bytes<T, L, c, 2>(n, Y);
      constexpr int kThreads = fused::kTwoTileThreads<T>, K = fused::kTwoTileLinesAtOnce;
      if (smem <= optin)
        return {axis == 1 ? fused::yz_pass_kernel<T, L, c, 1, true, 2, kThreads, K, 8, false, Y>
                          : fused::yz_pass_kernel<T, L, c, 2, true, 2, kThreads, K, 8, false, Y>,
                kThreads, smem};
    }
    return {axis == 1 ? fused::yz_pass_kernel<T, L, c, 1, true, 1, 256, 1, 8, false, Y>
                      : fused::yz_pass_kernel<T, L, c, 2, true, 1, 256, 1, 8, false, Y>,
            256, fused::yz_pass_smem_bytes<T, L, c>(n, Y)};
  };
  return fused::with_chunk_cap(cap, [&](auto C) {
    return cyclic ? launch(C, std::true_type{}) : launch(C, std::false_type{});
  });
}

// Whether the kernel's shared memory fits the device, and the blocks of `threads` the
// device holds at once.
template <class Kernel>
std::pair<bool, int> fit_launch(Kernel kernel, std::size_t smem, int device, int threads = 256) {
  const fused::DeviceLimits limits = fused::device_limits(device);
  const int per_sm = fused::blocks_per_sm(kernel, smem, threads, limits);
  if (per_sm < 0) return {false, 0};
  return {true, std::max(1, per_sm) * limits.sms};
}

static_assert(32 * fused::kXLineWarps == 256, "the constant-alpha x-line kernels run blocks of 256 threads");

// Launches kernel(args) on `blocks` blocks of `threads`. The shared-memory limit is set
// at every launch: it belongs to the kernel, and an entry for another line length with the
// same kernel may have set it lower since (the fused step does the same).
template <class Kernel, class Args>
void launch_tiles(Kernel kernel, const Args& args, int blocks, std::size_t smem, cudaStream_t stream,
                  int threads = 256) {
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<blocks, threads, smem, stream>>>(args);
  ADI3D_CUDA_LAUNCH_CHECK();
}

// Tiles of lines along axis: tiles of L columns (x) times the planes across both.
template <class Span>
int tile_count(const Span& span, int axis, int L, int nx) {
  const int other = axis == 2 ? 1 : 2;
  return (nx + L - 1) / L * (span.last[other] - span.first[other] + 1);
}

}  // namespace

template <class T>
const typename WarpLineSolve<T>::Factors& WarpLineSolve<T>::factors(const OperatorView<T>& op, int axis, T tau,
                                                                    int first, int last, int cap, int device,
                                                                    CUstream_st* stream) {
  const LineMatrixKey<T> key = line_matrix_key(op, axis);
  for (const Factors& f : cache_)
    if (f.device == device && f.axis == axis && f.key == key && f.tau == tau) return f;
  cudaStream_t s = stream;
  // A handful of tau per run is the rule; past that, start over (queued solves may still
  // read the entries).
  if (cache_.size() >= 32) {
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
    cache_.clear();
  }
  const bool cyclic = op.lo[axis] == BoundaryKind::periodic;
  const SolveLaunch<T> launch = solve_launch<T>(axis, cap, last - first + 3,
                                                static_cast<std::size_t>(fused::device_limits(device).optin), cyclic);
  Factors f{device, axis, key, tau, {false, 0}, launch.kernel, launch.threads, launch.smem, T(0), {}};
  const auto [fits, resident] = fit_launch(f.kernel, f.smem, device, f.threads);
  f.fit = {fits, resident};
  if (fits) {
    const std::size_t count = 3 * 32 * static_cast<std::size_t>(cap);
    std::vector<T> h(count, T(0));
    if (cyclic) {
      const fused::CyclicTileFactors<T> c = fused::cyclic_tile_line_factors(op, axis, tau, cap, h.data());
      f.s = c.s;
      h.push_back(c.corner_ratio);
      h.push_back(c.inv_denominator);
      h.insert(h.end(), c.z.begin(), c.z.end());
    } else {
      f.s = fused::tile_line_factors(op, axis, tau, first, last, cap, h.data());
    }
    f.values = device_allocate<T>(h.size());
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(f.values.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // h is pageable and goes out of scope
  }
  cache_.push_back(std::move(f));
  return cache_.back();
}

template <class T>
bool WarpLineSolve<T>::run(const OperatorView<T>& op, int axis, T tau, T* d, CUstream_st* stream) {
  if (axis < 0 || axis > 2) return false;
  // Cyclic lines of an alpha field (each its own correction) keep the other solvers.
  const bool cyclic = op.lo[axis] == BoundaryKind::periodic;
  if (cyclic && (op.alpha_field || op.n[axis] < 3)) return false;
  // Robin lines of constant alpha that an h field makes differ (the shared factors cannot
  // take them; an alpha field's kernels take each line's Robin terms: RobinEnds).
  if (robin_axis(op, axis) && !op.alpha_field && !lines_alike(op, axis)) return false;
  // Every line, those of face nodes of the other axes too (as the other line solvers):
  // over the unknowns of the line's own axis. Dirichlet end nodes are not unknowns; every
  // node of a periodic line is.
  Span span{};
  for (int a = 0; a < 3; ++a) {
    span.first[a] = a == axis ? fused::first_unknown(op, a) : 0;
    span.last[a] = a == axis ? fused::last_unknown(op, a) : op.n[a] - 1;
  }
  const int unknowns = span.last[axis] - span.first[axis] + 1;
  const int cap = fused::chunk_cap(unknowns + 2);
  if (cap == 0) return false;
  // Every row a Dirichlet row, or no line: d is its own solution.
  for (int a = 0; a < 3; ++a)
    if (span.last[a] < span.first[a]) return true;
  int device = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  if (op.alpha_field) {
    const fused::VarSolveArgs<T> args = fused::var_solve_args(op, span.first, span.last, tau, d);
    if (axis == 0) return fused::launch_x_line_var(args, fused::device_limits(device), stream);
    auto launch = std::find_if(field_launches_.begin(), field_launches_.end(), [&](const FieldLaunch& l) {
      return l.device == device && l.axis == axis && l.n == op.n[axis] && l.cap == cap;
    });
    if (launch == field_launches_.end()) {
      const auto tiles = fused::var_tile_launch<T, true>(axis, op.n[axis], cap, fused::device_limits(device).optin);
      const auto [fits, resident] = fit_launch(tiles.kernel, tiles.smem, device, tiles.threads);
      field_launches_.push_back(
          {device, axis, op.n[axis], cap, {fits, resident}, tiles.kernel, tiles.threads, tiles.smem, tiles.lines});
      launch = field_launches_.end() - 1;
    }
    if (!launch->fit.fits) return false;
    const int tiles = tile_count(span, axis, launch->lines, op.n[0]);
    launch_tiles(launch->kernel, args, std::min(tiles, launch->fit.resident_blocks), launch->smem, stream,
                 launch->threads);
    return true;
  }
  const Factors& f = factors(op, axis, tau, span.first[axis], span.last[axis], cap, device, stream);
  if (!f.fit.fits) return false;
  fused::SolveArgs<T> args{};
  for (int a = 0; a < 3; ++a) {
    args.n[a] = op.n[a];
    args.first[a] = span.first[a];
    args.last[a] = span.last[a];
  }
  args.d = d;
  args.chunk_factors = f.values.data();
  args.s = f.s;
  const long long work = axis == 0 ? fused::XLines(args).warp_blocks() : tile_count(span, axis, fused::kYZLines<T>, op.n[0]);
  const int blocks = static_cast<int>(std::min<long long>(work, f.fit.resident_blocks));
  launch_tiles(f.kernel, args, blocks, f.smem, stream, f.threads);
  return true;
}

template class WarpLineSolve<float>;
template class WarpLineSolve<double>;

}  // namespace adi3d::cuda
