#pragma once
// Plain x line solve of constant alpha (WarpLineSolve, line_solve_warp.cu): a warp per
// line, the fused step's warp solve (fused_step_kernels.cuh) on factors shared by every
// line. Internal to the CUDA backend.
//
// The lines are contiguous, so a warp copies its line itself, 32 consecutive values per
// cp.async instruction (4 or 8 bytes each: any alignment, the odd line lengths of
// vertex-centred grids such as 257 too), into a row of shared memory, from where each lane
// takes its chunk of C consecutive rows (C odd: the 32 chunks fall in distinct banks); the
// solved rows go back by plain stores, 32 consecutive values per instruction. Each warp
// has two rows and copies its next line while it solves the current one, so that every
// warp always has a line in flight. Holding the next line in registers instead spilled
// (C = 17: 64 registers for 4 blocks per SM).
//
// 512^3 on an H100 (adi3d bench gpu, 2026-11-23): 0.43-0.45 ms float, 0.84 ms double
// (81-86% of a device copy), against 0.67 / 1.18 ms for the tridiag library's solve.
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"

#include <cuda_runtime.h>

#include <cstddef>

namespace adi3d::cuda::fused {

constexpr int kXLineWarps = 8;  // warps per block

// A row of shared memory: a line's nodes 0 .. 32C+1 (at most 32 C unknowns and the end
// nodes beside them; the chunks' padding rows).
template <int C>
constexpr int x_line_row() {
  return 32 * C + 2;
}
// Dynamic shared memory: the factors (3 x 32 C) and two rows per warp.
template <class T, int C>
constexpr std::size_t x_line_smem_bytes() {
  return (3 * 32 * C + 2 * kXLineWarps * x_line_row<C>()) * sizeof(T);
}

// The x lines of a plain solve (SolveArgs or VarSolveArgs: the nodes (j, k), a.first[1..2]
// <= j, k <= a.last[1..2]), j fastest: their count, the blocks of a warp per line, and the
// offset of node 0 of line g.
struct XLines {
  int first_j, first_k, lines_y, nx, ny;
  long long count;
  template <class Args>
  __host__ __device__ __forceinline__ explicit XLines(const Args& a)
      : first_j(a.first[1]),
        first_k(a.first[2]),
        lines_y(a.last[1] - a.first[1] + 1),
        nx(a.n[0]),
        ny(a.n[1]),
        count(static_cast<long long>(a.last[1] - a.first[1] + 1) * (a.last[2] - a.first[2] + 1)) {}
  __host__ __device__ long long warp_blocks() const { return (count + kXLineWarps - 1) / kXLineWarps; }
  // Line g's row of the grid's (j, k) rows: k ny + j.
  __device__ __forceinline__ std::size_t row(long long g) const {
    const int j = first_j + static_cast<int>(g % lines_y);
    const int k = first_k + static_cast<int>(g / lines_y);
    return static_cast<std::size_t>(k) * ny + j;
  }
  __device__ __forceinline__ std::size_t offset(long long g) const { return row(g) * nx; }
};

// The lines along x through the nodes (j, k), a.first[1..2] <= j, k <= a.last[1..2], over
// their unknowns a.first[0]..a.last[0] (R of them, R <= 32 C): d in place. A Dirichlet end
// value of d (not necessarily 0 there) moves into the first or last row, a Neumann end row
// is halved, as in the y/z plain solve (yz_pass_kernel); kCyclic: cyclic lines
// (cyclic_correction), which have no end rows and take their correction as they are stored.
// Block 32 kXLineWarps threads,
// persistent over the lines (a warp takes every (gridDim.x kXLineWarps)-th line, so that
// the warps of the device work through one band of memory at a time).
//
// Row layout: node i of the line at row[1 - first + i], so unknown r at row[1 + r]. The
// whole line is copied (nodes 0..nx-1: the unknowns and their Dirichlet end nodes). The
// padding rows (r >= R) hold whatever the last lines left there, finite (zeros at first):
// alpha = 0 there, so they solve to 0 from any finite data.
template <class T, int C, bool kCyclic = false>
__global__ void __launch_bounds__(32 * kXLineWarps) x_line_kernel(SolveArgs<T> a) {
  constexpr int kRow = x_line_row<C>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* fac = reinterpret_cast<T*>(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  T* rows = fac + 3 * 32 * C + 2 * warp * kRow;
  load_factors<T, C>(a.chunk_factors, fac);
  for (int e = lane; e < 2 * kRow; e += 32) rows[e] = T(0);
  __syncthreads();

  const int nx = a.n[0];
  const int first = a.first[0], R = a.last[0] - first + 1;
  const bool dirichlet_lo = first == 1, dirichlet_hi = first + R == nx - 1;
  const XLines xl(a);
  const long long lines = xl.count;
  const long long step = static_cast<long long>(gridDim.x) * kXLineWarps;
  // Line g into row b: one commit group per line, an empty one past the last line.
  auto fetch = [&](long long g, int b) {
    if (g < lines) {
      const T* src = a.d + xl.offset(g);
      T* dst = rows + b * kRow + 1 - first;
      for (int i = lane; i < nx; i += 32) cp_async<sizeof(T)>(dst + i, src + i, true);
    }
    cp_async_commit();
  };

  long long g = blockIdx.x * static_cast<long long>(kXLineWarps) + warp;
  fetch(g, 0);
  for (int b = 0; g < lines; g += step, b ^= 1) {
    fetch(g + step, b ^ 1);
    cp_async_wait<1>();  // line g is in row b
    __syncwarp();
    T* row = rows + b * kRow;
    T* chunk = row + 1 + lane * C;
    if (lane == 0 && !kCyclic) prepare_end_rows(row + 1, row + R, dirichlet_lo, dirichlet_hi, a.s, row[0], row[R + 1]);
    __syncwarp();
    T v[C];
#pragma unroll
    for (int q = 0; q < C; ++q) v[q] = chunk[q];
    warp_solve<T, C>(v, fac, a.s);
#pragma unroll
    for (int q = 0; q < C; ++q) chunk[q] = v[q];
    __syncwarp();
    T* p = a.d + xl.offset(g) + first;
    if constexpr (kCyclic) {
      const T* terms = cyclic_terms<T, C>(a.chunk_factors);
      const T c = cyclic_correction(terms, row[1], row[R]);  // nodes 0 and n-1
      const T* z = terms + 2;
      // z by batches of rows, their loads issued together (as in yz_pass_kernel; its
      // store_column, with pitch 1 and a sweep of 32, took 2-9 more registers here and
      // spilled 4 bytes in the double kernel of chunks of 21 rows).
      constexpr int kBatch = 8;
      for (int r = lane; r < R; r += 32 * kBatch) {
        T zz[kBatch];
#pragma unroll
        for (int q = 0; q < kBatch; ++q)
          if (r + 32 * q < R) zz[q] = z[r + 32 * q];
#pragma unroll
        for (int q = 0; q < kBatch; ++q)
          if (r + 32 * q < R) p[r + 32 * q] = fma(-c, zz[q], row[1 + r + 32 * q]);
      }
    } else {
      for (int r = lane; r < R; r += 32) p[r] = row[1 + r];
    }
    __syncwarp();  // row b is read before the copy of line g + 2 step overwrites it
  }
  cp_async_wait<0>();
}

}  // namespace adi3d::cuda::fused
