// The partition method's reduced systems on the GPU (reduced_system.hpp). The fused slab
// step's (constant alpha): each ghost value a fixed combination of every rank's y
// (reduced_combination), added where the z pass's data takes it. The others': a thread per
// line, the banded elimination of solve_reduced_line in local memory (16 doubles per rank),
// reading every rank's message from the gathered buffer (2 values per rank and line, plus
// 4 per rank and line with alpha fields) and writing the two ghost values of the line.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/distributed/reduced_system.hpp"

namespace adi3d::cuda {
namespace {

template <class T, int MaxRanks>
__global__ void reduced_lines_kernel(ReducedLines lines, const T* __restrict__ messages, T* __restrict__ x_below,
                                     T* __restrict__ x_above) {
  double work[kReducedScratchPerRank * MaxRanks];
  for (std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; q < lines.plane;
       q += std::size_t(gridDim.x) * blockDim.x) {
    double below = 0, above = 0;
    solve_reduced_line(lines, messages, q, work, below, above);
    x_below[q] = static_cast<T>(below);
    x_above[q] = static_cast<T>(above);
  }
}

template <class T, int MaxRanks>
void launch(const ReducedLines& lines, const T* messages, T* x_below, T* x_above, cudaStream_t s) {
  constexpr int kThreads = 128;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((lines.plane + kThreads - 1) / kThreads, 65535));
  reduced_lines_kernel<T, MaxRanks><<<blocks, kThreads, 0, s>>>(lines, messages, x_below, x_above);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
__global__ void add_ghost_couplings_kernel(const T* __restrict__ gathered, std::size_t size, std::size_t plane,
                                           int unknowns, const T* __restrict__ below, const T* __restrict__ above,
                                           T s_lo, T* __restrict__ d_lo, T s_hi, T* __restrict__ d_hi) {
  for (std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; q < plane;
       q += std::size_t(gridDim.x) * blockDim.x) {
    T lo = T(0), hi = T(0);
    for (int j = 0; j < unknowns; ++j) {
      const T g = gathered[(j / 2) * size + (j % 2) * plane + q];
      lo = fma(below[j], g, lo);
      hi = fma(above[j], g, hi);
    }
    if (d_lo) d_lo[q] = fma(s_lo, lo, d_lo[q]);
    if (d_hi) d_hi[q] = fma(s_hi, hi, d_hi[q]);
  }
}

}  // namespace

template <class T>
void launch_add_ghost_couplings(const T* gathered, std::size_t size, std::size_t plane, int ranks, const T* below,
                                const T* above, T s_lo, T* d_lo, T s_hi, T* d_hi, cudaStream_t s) {
  if (plane == 0 || (!d_lo && !d_hi)) return;
  constexpr int kThreads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((plane + kThreads - 1) / kThreads, 65535));
  add_ghost_couplings_kernel<<<blocks, kThreads, 0, s>>>(gathered, size, plane, 2 * ranks, below, above, s_lo, d_lo,
                                                         s_hi, d_hi);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
bool launch_solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above, cudaStream_t s) {
  if (lines.plane == 0) return true;
  if (lines.ranks <= 4) launch<T, 4>(lines, messages, x_below, x_above, s);
  else if (lines.ranks <= 16) launch<T, 16>(lines, messages, x_below, x_above, s);
  else return false;
  return true;
}

template void launch_add_ghost_couplings<float>(const float*, std::size_t, std::size_t, int, const float*,
                                                const float*, float, float*, float, float*, cudaStream_t);
template void launch_add_ghost_couplings<double>(const double*, std::size_t, std::size_t, int, const double*,
                                                 const double*, double, double*, double, double*, cudaStream_t);
template bool launch_solve_reduced_lines<float>(const ReducedLines&, const float*, float*, float*, cudaStream_t);
template bool launch_solve_reduced_lines<double>(const ReducedLines&, const double*, double*, double*, cudaStream_t);

}  // namespace adi3d::cuda
