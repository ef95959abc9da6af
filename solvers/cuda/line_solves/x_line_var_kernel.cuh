#pragma once
// Plain x line solve of an alpha field (WarpLineSolve, line_solve_warp.cu): x_line_kernel
// (x_line_kernel.cuh) with each line's own rows, made from alpha (or its material index)
// by the lanes, and the y/z tiles' partition solve (warp_solve_var,
// fused_step_var_kernels.cuh). Internal to the CUDA backend.
//
// A warp copies its line of d and its line of alpha (or of material bytes) itself
// (cp.async, 32 values or words an instruction) into rows of shared memory, the next
// line's while it solves the current one; each lane makes the face weights of its chunk
// of C rows from the alpha row (harmonic means, as the tiles do) or looks them up in the
// face table by the bytes, the line's end rows are made in the d row (PlainLineEnds), and
// the solved rows go back by plain stores.
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_limits.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step_var_kernels.cuh"
#include "solvers/cuda/common/slot_bytes.cuh"
#include "solvers/cuda/line_solves/x_line_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

namespace adi3d::cuda::fused {

// A row of material bytes: 4 guard bytes (node -1 of a Neumann line), nodes 0 .. 32 C + 1
// at bytes 4 + i, and room for SlotBytes' last word; whole 16-byte units.
template <int C>
constexpr int kXLineByteRow = (4 + 32 * C + 2 + 16 + 15) / 16 * 16;
// Bytes of a coefficient row (alpha, or material bytes) and of a warp's four rows.
template <class T, int C, bool kMaterial>
constexpr int x_line_coef_row_bytes() {
  return kMaterial ? kXLineByteRow<C> : x_line_row<C>() * static_cast<int>(sizeof(T));
}
template <class T, int C, bool kMaterial>
constexpr int x_line_var_warp_bytes() {
  return 2 * x_line_row<C>() * static_cast<int>(sizeof(T)) + 2 * x_line_coef_row_bytes<T, C, kMaterial>();
}
// The face table (kMaterial: tau inv_h2[0] times the material face means).
template <class T, bool kMaterial>
constexpr int kXLineTableBytes = kMaterial ? kMaxMaterials * kMaxMaterials * static_cast<int>(sizeof(T)) : 0;
// Dynamic shared memory: the table, then per warp two rows of d and two coefficient rows.
template <class T, int C, bool kMaterial>
constexpr std::size_t x_line_var_smem_bytes() {
  return static_cast<std::size_t>(kXLineTableBytes<T, kMaterial> + kXLineWarps * x_line_var_warp_bytes<T, C, kMaterial>());
}

// The lines along x through the nodes (j, k), a.first[1..2] <= j, k <= a.last[1..2], over
// their unknowns a.first[0]..a.last[0] (R of them, R <= 32 C): d in place, as
// x_line_kernel, the rows from a.alpha (node diffusivity) or, kMaterial, from a.material
// and a.material_face_mean, tau and inv_h2[0]. Row layout: node i of the line at row[1 -
// first + i] in d's row and alpha's alike, at byte 4 + i of a material row. Padding rows
// and the faces beside them hold whatever was there (zeros at first): the solve drops
// them.
template <class T, int C, bool kMaterial = false>
__global__ void __launch_bounds__(32 * kXLineWarps, 1) x_line_var_kernel(VarSolveArgs<T> a) {
  constexpr int kRow = x_line_row<C>();
  constexpr int kCoefRow = x_line_coef_row_bytes<T, C, kMaterial>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  T* const table = reinterpret_cast<T*>(smem_raw);
  unsigned char* const mine = smem_raw + kXLineTableBytes<T, kMaterial> + warp * x_line_var_warp_bytes<T, C, kMaterial>();
  T* rows = reinterpret_cast<T*>(mine);  // d rows 0 and 1
  unsigned char* const coef = mine + 2 * kRow * sizeof(T);  // coefficient rows 0 and 1
  for (int e = lane; e < x_line_var_warp_bytes<T, C, kMaterial>() / 4; e += 32)
    reinterpret_cast<unsigned*>(mine)[e] = 0u;
  const T tw = a.tau * a.inv_h2[0];
  if constexpr (kMaterial)
    for (int e = threadIdx.x; e < kMaxMaterials * kMaxMaterials; e += 32 * kXLineWarps)
      table[e] = tw * a.material_face_mean[e];
  __syncthreads();

  const int nx = a.n[0];
  const int first = a.first[0], R = a.last[0] - first + 1;
  const PlainLineEnds<T, C> ends(lane, first, R, nx);
  const int q_end = ends.q_end();
  const XLines lines(a);
  const long long step = static_cast<long long>(gridDim.x) * kXLineWarps;
  // Line g's d into row b and its coefficients into coefficient row b: one commit group
  // per line, an empty one past the last line.
  auto fetch = [&](long long g, int b) {
    if (g < lines.count) {
      const std::size_t o = lines.offset(g);
      T* dst = rows + b * kRow + 1 - first;
      if constexpr (kMaterial) {
        for (int i = lane; i < nx; i += 32) cp_async<sizeof(T)>(dst + i, a.d + o + i, true);
        // Whole words of the index's row (its pitch is a multiple of 32 bytes).
        const std::uint8_t* src = a.material + lines.row(g) * a.material_pitch;
        unsigned char* mdst = coef + b * kCoefRow + 4;
        for (int i = 4 * lane; i < nx; i += 4 * 32) cp_async<4>(mdst + i, src + i, true);
      } else {
        T* adst = reinterpret_cast<T*>(coef + b * kCoefRow) + 1 - first;
        for (int i = lane; i < nx; i += 32) {
          cp_async<sizeof(T)>(dst + i, a.d + o + i, true);
          cp_async<sizeof(T)>(adst + i, a.alpha + o + i, true);
        }
      }
    }
    cp_async_commit();
  };

  long long g = blockIdx.x * static_cast<long long>(kXLineWarps) + warp;
  fetch(g, 0);
  for (int b = 0; g < lines.count; g += step, b ^= 1) {
    fetch(g + step, b ^ 1);
    cp_async_wait<1>();  // line g is in rows b
    __syncwarp();
    T* row = rows + b * kRow;
    T* chunk = row + 1 + lane * C;
    // Face q joins the chunk's nodes q - 1 and q (nodes first + lane C + q - 1, + q); the
    // end rows take face q_end, a variable q.
    auto solve = [&](auto face, T end_face) {
      ends.end_rows(chunk, 1, face(0), end_face);  // the lane's own rows; the end nodes are read only
      T v[C];
#pragma unroll
      for (int q = 0; q < C; ++q) v[q] = chunk[q];
      const std::size_t entry = lines.row(g);  // the line's in the x faces' arrays
      const T robin_lo = a.robin.template term<0>(a.tau, entry), robin_hi = a.robin.template term<1>(a.tau, entry);
      warp_solve_var<T, C>(v, face, [&](int q) { return ends.mass(q, robin_lo, robin_hi); }, ends.lim);
#pragma unroll
      for (int q = 0; q < C; ++q) chunk[q] = v[q];
    };
    if constexpr (kMaterial) {
      const unsigned char* m0 = coef + b * kCoefRow + 4 + first + lane * C - 1;  // node q - 1 of face q at m0[q]
      const SlotBytes<C + 2> m(m0);  // (by words; indexed by a variable, it would sit in local memory)
      auto weight = [&](int m_lo, int m_hi) { return table[m_lo * kMaxMaterials + m_hi]; };
      constexpr int kMask = kMaxMaterials - 1;
      solve([&](int q) { return ends.face(q, weight(m[q], m[q + 1])); },
            ends.face(q_end, weight(m0[q_end] & kMask, m0[q_end + 1] & kMask)));
    } else {
      const T* arow = reinterpret_cast<const T*>(coef + b * kCoefRow) + lane * C;
      auto face = [&](int q) { return ends.face(q, face_weight(arow[q], arow[q + 1], tw)); };
      solve(face, face(q_end));
    }
    __syncwarp();
    T* p = a.d + lines.offset(g) + first;
    for (int r = lane; r < R; r += 32) p[r] = row[1 + r];
    __syncwarp();  // rows b are read before the copy of line g + 2 step overwrites them
  }
  cp_async_wait<0>();
}

// The x_line_var_kernel for a's lines, its shared memory and blocks per SM on this device
// (per_sm < 0, kernel null: none takes them, more than 1056 unknowns, or rows beyond
// shared memory, double lines of alpha of more than 546 unknowns). By the material index
// where a has one (the bytes and the face table: 2 arrays and a byte per node, not 3
// arrays), else from alpha.
template <class T>
struct XLineVarLaunch {
  void (*kernel)(VarSolveArgs<T>) = nullptr;
  std::size_t smem = 0;
  int per_sm = -1;
};
template <class T>
XLineVarLaunch<T> x_line_var_launch(const VarSolveArgs<T>& a, const DeviceLimits& limits) {
  const int cap = chunk_cap(a.last[0] - a.first[0] + 3);
  if (cap == 0) return {};
  const bool material = a.material != nullptr;
  XLineVarLaunch<T> l;
  with_chunk_cap(cap, [&](auto C) {
    l.kernel = material ? x_line_var_kernel<T, C.value, true> : x_line_var_kernel<T, C.value, false>;
    l.smem = material ? x_line_var_smem_bytes<T, C.value, true>() : x_line_var_smem_bytes<T, C.value, false>();
  });
  l.per_sm = blocks_per_sm(l.kernel, l.smem, 32 * kXLineWarps, limits);
  if (l.per_sm < 0) l.kernel = nullptr;
  return l;
}

// x_line_var_kernel over the lines and unknowns of a, persistent blocks, by l (of
// x_line_var_launch); false (nothing launched) where none takes them.
template <class T>
bool launch_x_line_var(const VarSolveArgs<T>& a, const XLineVarLaunch<T>& l, const DeviceLimits& limits,
                       cudaStream_t s) {
  if (!l.kernel) return false;
  const long long blocks = std::min<long long>(XLines(a).warp_blocks(), std::max(1, l.per_sm) * limits.sms);
  l.kernel<<<static_cast<int>(blocks), 32 * kXLineWarps, l.smem, s>>>(a);
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}
template <class T>
bool launch_x_line_var(const VarSolveArgs<T>& a, const DeviceLimits& limits, cudaStream_t s) {
  return launch_x_line_var(a, x_line_var_launch(a, limits), limits, s);
}

}  // namespace adi3d::cuda::fused
