#pragma once
// Plain x line solve of an alpha field (WarpLineSolve, line_solve_warp.cu): x_line_kernel
// (x_line_kernel.cuh) with each line's own rows, made from alpha by the lanes, and the
// y/z tiles' partition solve (warp_solve_var, fused_step_var_kernels.cuh). Internal to
// the CUDA backend.
//
// A warp copies its line of d and its line of alpha itself (cp.async, 32 consecutive
// values an instruction, any alignment) into two rows of shared memory, the next line's
// while it solves the current one; each lane makes the face weights of its chunk of C
// rows from the alpha row (harmonic means, as the tiles do), the line's end rows are
// made in the d row (PlainLineEnds), and the solved rows go back by plain stores.
#include "solvers/cuda/async_copy.cuh"
#include "solvers/cuda/cuda_check.hpp"
#include "solvers/cuda/device_limits.cuh"
#include "solvers/cuda/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step_var_kernels.cuh"
#include "solvers/cuda/x_line_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace adi3d::cuda::fused {

// Dynamic shared memory: per warp two rows of d and two of alpha.
template <class T, int C>
constexpr std::size_t x_line_var_smem_bytes() {
  return static_cast<std::size_t>(4 * kXLineWarps * x_line_row<C>()) * sizeof(T);
}

// The lines along x through the nodes (j, k), a.first[1..2] <= j, k <= a.last[1..2], over
// their unknowns a.first[0]..a.last[0] (R of them, R <= 32 C): d in place, as
// x_line_kernel, the rows from a.alpha (node diffusivity), tau and inv_h2[0]. Row layout:
// node i of the line at row[1 - first + i], in d's row and alpha's alike. Padding rows and
// the faces beside them hold whatever was there (zeros at first): the solve drops them.
template <class T, int C>
__global__ void __launch_bounds__(32 * kXLineWarps) x_line_var_kernel(VarSolveArgs<T> a) {
  constexpr int kRow = x_line_row<C>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  T* rows = reinterpret_cast<T*>(smem_raw) + 4 * warp * kRow;  // d rows 0 and 1, alpha rows 2 and 3
  for (int e = lane; e < 4 * kRow; e += 32) rows[e] = T(0);
  __syncthreads();

  const int nx = a.n[0];
  const int first = a.first[0], R = a.last[0] - first + 1;
  const PlainLineEnds<T, C> ends(lane, first, R, nx);
  const int q_end = ends.q_end();
  const T tw = a.tau * a.inv_h2[0];
  const XLines lines(a);
  const long long step = static_cast<long long>(gridDim.x) * kXLineWarps;
  // Line g's d into row b and its alpha into row 2 + b: one commit group per line, an
  // empty one past the last line.
  auto fetch = [&](long long g, int b) {
    if (g < lines.count) {
      const std::size_t o = lines.offset(g);
      T* dst = rows + b * kRow + 1 - first;
      T* adst = rows + (2 + b) * kRow + 1 - first;
      for (int i = lane; i < nx; i += 32) {
        cp_async<sizeof(T)>(dst + i, a.d + o + i, true);
        cp_async<sizeof(T)>(adst + i, a.alpha + o + i, true);
      }
    }
    cp_async_commit();
  };

  long long g = blockIdx.x * static_cast<long long>(kXLineWarps) + warp;
  fetch(g, 0);
  for (int b = 0; g < lines.count; g += step, b ^= 1) {
    fetch(g + step, b ^ 1);
    cp_async_wait<1>();  // line g is in rows b and 2 + b
    __syncwarp();
    T* row = rows + b * kRow;
    const T* arow = rows + (2 + b) * kRow + lane * C;  // the lane's first face's first node
    T* chunk = row + 1 + lane * C;
    // Face q joins the chunk's nodes q - 1 and q (arow[q], arow[q + 1]).
    auto face = [&](int q) { return ends.face(q, face_weight(arow[q], arow[q + 1], tw)); };
    ends.end_rows(chunk, 1, face(0), face(q_end));  // the lane's own rows; the end nodes are read only
    T v[C];
#pragma unroll
    for (int q = 0; q < C; ++q) v[q] = chunk[q];
    warp_solve_var<T, C>(v, face, [&](int q) { return ends.mass(q); }, ends.lim);
#pragma unroll
    for (int q = 0; q < C; ++q) chunk[q] = v[q];
    __syncwarp();
    T* p = a.d + lines.offset(g) + first;
    for (int r = lane; r < R; r += 32) p[r] = row[1 + r];
    __syncwarp();  // rows b and 2 + b are read before the copy of line g + 2 step overwrites them
  }
  cp_async_wait<0>();
}

// x_line_var_kernel over the lines and unknowns of a, persistent blocks; false (nothing
// launched) where the warp solve does not take the lines (more than 1056 unknowns) or
// their rows do not fit shared memory (double lines of more than 546 unknowns).
template <class T>
bool launch_x_line_var(const VarSolveArgs<T>& a, const DeviceLimits& limits, cudaStream_t s) {
  const int cap = chunk_cap(a.last[0] - a.first[0] + 3);
  if (cap == 0) return false;
  const auto [kernel, smem] = with_chunk_cap(
      cap, [](auto C) { return std::make_pair(x_line_var_kernel<T, C.value>, x_line_var_smem_bytes<T, C.value>()); });
  const int per_sm = blocks_per_sm(kernel, smem, 32 * kXLineWarps, limits);
  if (per_sm < 0) return false;
  const long long lines = static_cast<long long>(a.last[1] - a.first[1] + 1) * (a.last[2] - a.first[2] + 1);
  const long long blocks = std::min<long long>((lines + kXLineWarps - 1) / kXLineWarps, std::max(1, per_sm) * limits.sms);
  kernel<<<static_cast<int>(blocks), 32 * kXLineWarps, smem, s>>>(a);
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}

}  // namespace adi3d::cuda::fused
