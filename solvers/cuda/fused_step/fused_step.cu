// The fused Douglas step (DESIGN.md §2-§3) for constant alpha, fixed Dirichlet faces,
// insulated (zero-flux Neumann) faces and periodic axes:
//   pass x: d = (I - tau Ax)^-1 dt (A u + f)   (rhs formed in shared memory, then solved)
//   pass y: d = (I - tau Ay)^-1 d               (in place)
//   pass z: u = u + (I - tau Az)^-1 d           (update fused into the solve)
// Moves 7 arrays per point (x: u in, d out; y: d in, d out; z: d in, u in, u out), 8 with
// a source. Dirichlet nodes keep du = 0: only the unknowns are solved; boundary nodes of u
// there are never touched, and of d only by the bulk x pass (zero increments on Dirichlet
// x faces). A Neumann face's nodes are unknowns: the x pass mirrors u across the face for
// their rhs (the ghost node), and every pass halves their rows (fused_pass_factors.hpp).
// On a periodic axis every node is an unknown: the x pass takes the ghosts from the other
// end, and every pass solves its lines as cyclic ones (Sherman-Morrison: the warp solve of
// a modified matrix, then a correction by one more vector; still 7 arrays).
// The kernels and their technique are in fused_step_kernels.cuh (warp-per-line chunked
// Thomas, cp.async or sm_90 bulk-copy streaming); lines longer
// than they take (n > 1058, or an x line whose planes do not fit in shared memory) go to
// the thread-per-line tile kernel below, one pass at a time.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step.hpp"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_var.hpp"
#include "solvers/cuda/fused_step/fused_step_xy_kernel.cuh"
#include "solvers/cuda/fused_step/slab_weights.hpp"
#include "solvers/cuda/common/plane_split.hpp"
#include "solvers/discretization.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <type_traits>

namespace adi3d::cuda {
namespace {

// ---------------------------------------------------------------------------------------
// Fallback: one tile of L lines in shared memory (x: L neighbouring x lines of one plane;
// y, z: L lines neighbouring in x, so every row of the tile is one 128-byte segment),
// transposed so that one thread per line runs Thomas with the shared factors; loads and
// stores are coalesced; the u neighbours of the rhs hit L1/L2.
// Block: FusedStepPolicy threads; grid (ceil(n_line_axis / L), n_other - 2) where the line
// axis is y for the x pass and x for the y and z passes. Dynamic shared memory:
// n (L + 1) + 3 n values of T.
template <class T, int L, int kAxis>
__global__ void __launch_bounds__(FusedStepPolicy<T>::threads)
    fallback_pass_kernel(fused::PassArgs<T> a) {
  extern __shared__ unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);  // [m][L + 1]: padded against bank conflicts
  const int n = a.n[kAxis];
  T* fac = tile + static_cast<std::size_t>(n) * (L + 1);
  const int nx = a.n[0], ny = a.n[1];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int tid = threadIdx.x;
  constexpr int kThreads = FusedStepPolicy<T>::threads;

  for (int e = tid; e < 3 * n; e += kThreads) fac[e] = a.factors[e];

  // Line l of this block: its first node and whether it is an unknown line.
  const int first = blockIdx.x * L;  // j (x pass) or i (y, z passes) of line 0
  const int other = 1 + blockIdx.y;  // k (x, y passes) or j (z pass)
  const int line_n = kAxis == 0 ? ny : nx;
  auto line_ok = [&](int l) { return first + l >= 1 && first + l <= line_n - 2; };

  // Tile element e <-> (line l, row m) over the interior rows; consecutive e are
  // consecutive nodes in memory (along the line for x, across the lines for y and z).
  const int rows = n - 2;
  const int total = rows * L;
  auto locate = [&](int e, int& l, int& m) {
    if (kAxis == 0) {
      l = e / rows;
      m = 1 + (e - l * rows);
    } else {
      m = 1 + e / L;
      l = e % L;
    }
  };
  auto node = [&](int l, int m) -> std::size_t {
    const std::size_t c = first + l;
    if (kAxis == 0) return m + nx * (c + ny * static_cast<std::size_t>(other));
    if (kAxis == 1) return c + nx * (m + ny * static_cast<std::size_t>(other));
    return c + nx * static_cast<std::size_t>(other) + nxy * m;
  };
  // B elements per thread in flight before any is stored: enough loads outstanding to
  // cover DRAM latency at the few blocks per SM that the tile allows.
  constexpr int B = kAxis == 0 ? 4 : 8;
  const T wx = a.w[0], wy = a.w[1], wz = a.w[2];
  if (kAxis == 0) {
    // Warps take lines, lanes walk x: no division per element, B rows per lane in flight.
    for (int l = tid / 32; l < L; l += kThreads / 32) {
      if (!line_ok(l)) continue;
      const std::size_t row = node(l, 0);
      for (int m0 = 1 + (tid & 31); m0 < n - 1; m0 += 32 * B) {
        T v[B];
#pragma unroll
        for (int q = 0; q < B; ++q) {
          const int m = m0 + 32 * q;
          v[q] = T(0);
          if (m < n - 1) {
            // rhs = dt (A u + f), the interior row of apply_operator with constant weights.
            const std::size_t p = row + m;
            const T uc = a.u_in[p];
            T sum = wx * (a.u_in[p - 1] - uc) + wx * (a.u_in[p + 1] - uc);
            sum += wy * (a.u_in[p - nx] - uc) + wy * (a.u_in[p + nx] - uc);
            sum += wz * (a.u_in[p - nxy] - uc) + wz * (a.u_in[p + nxy] - uc);
            if (a.f) sum += a.f[p];
            v[q] = a.dt * sum;
          }
        }
#pragma unroll
        for (int q = 0; q < B; ++q)
          if (m0 + 32 * q < n - 1) tile[(m0 + 32 * q) * (L + 1) + l] = v[q];
      }
    }
  }
  for (int e0 = tid; kAxis != 0 && e0 < total; e0 += B * kThreads) {
    T v[B];
#pragma unroll
    for (int q = 0; q < B; ++q) {
      const int e = e0 + q * kThreads;
      v[q] = T(0);
      int l = 0, m = 0;
      if (e < total) locate(e, l, m);
      if (e < total && line_ok(l)) v[q] = a.d[node(l, m)];
    }
#pragma unroll
    for (int q = 0; q < B; ++q) {
      const int e = e0 + q * kThreads;
      int l = 0, m = 0;
      if (e < total) {
        locate(e, l, m);
        tile[m * (L + 1) + l] = v[q];
      }
    }
  }
  __syncthreads();

  // Thomas with the shared factors, one thread per line; rows 0 and n-1 are Dirichlet
  // rows with zero increment, so the sweep runs over the interior rows only.
  if (tid < L && line_ok(tid) && n >= 3) {
    const T* inv = fac;
    const T* ainv = fac + n;
    const T* cp = fac + 2 * n;
    T* col = tile + tid;
    // Chunks of C rows: all loads of a chunk are issued before its dependent chain and
    // its stores, so shared-memory latency is paid once per chunk, not once per row.
    constexpr int C = 8;
    T x = T(0);
    int m = 1;
    for (; m + C <= n - 1; m += C) {
      T r[C];
#pragma unroll
      for (int q = 0; q < C; ++q) r[q] = col[(m + q) * (L + 1)] * inv[m + q];
#pragma unroll
      for (int q = 0; q < C; ++q) r[q] = x = r[q] - ainv[m + q] * x;
#pragma unroll
      for (int q = 0; q < C; ++q) col[(m + q) * (L + 1)] = r[q];
    }
    for (; m < n - 1; ++m) {
      x = col[m * (L + 1)] * inv[m] - ainv[m] * x;
      col[m * (L + 1)] = x;
    }
    // Backward: x holds row n-2.
    m = n - 3;
    for (; m - C + 1 >= 1; m -= C) {
      T r[C];
#pragma unroll
      for (int q = 0; q < C; ++q) r[q] = col[(m - q) * (L + 1)];
#pragma unroll
      for (int q = 0; q < C; ++q) r[q] = x = r[q] - cp[m - q] * x;
#pragma unroll
      for (int q = 0; q < C; ++q) col[(m - q) * (L + 1)] = r[q];
    }
    for (; m >= 1; --m) {
      x = col[m * (L + 1)] - cp[m] * x;
      col[m * (L + 1)] = x;
    }
  }
  __syncthreads();

  if (kAxis == 0) {
    for (int l = tid / 32; l < L; l += kThreads / 32) {
      if (!line_ok(l)) continue;
      const std::size_t row = node(l, 0);
      for (int m = 1 + (tid & 31); m < n - 1; m += 32) a.d[row + m] = tile[m * (L + 1) + l];
    }
  }
  for (int e0 = tid; kAxis != 0 && e0 < total; e0 += B * kThreads) {
    T v[B];
    if (kAxis == 2) {
#pragma unroll
      for (int q = 0; q < B; ++q) {
        const int e = e0 + q * kThreads;
        int l = 0, m = 0;
        if (e < total) locate(e, l, m);
        v[q] = (e < total && line_ok(l)) ? a.u[node(l, m)] : T(0);
      }
    }
#pragma unroll
    for (int q = 0; q < B; ++q) {
      const int e = e0 + q * kThreads;
      int l = 0, m = 0;
      if (e < total) locate(e, l, m);
      if (e < total && line_ok(l)) {
        const T x = tile[m * (L + 1) + l];
        if (kAxis == 2)
          a.u[node(l, m)] = v[q] + x;
        else
          a.d[node(l, m)] = x;
      }
    }
  }
}

template <class T>
std::size_t fallback_smem_bytes(int n) {
  return (static_cast<std::size_t>(n) * (FusedStepPolicy<T>::lines + 1) + 3 * static_cast<std::size_t>(n)) *
         sizeof(T);
}

template <class T, int kAxis>
void launch_fallback_pass(const fused::PassArgs<T>& a, cudaStream_t s) {
  constexpr int L = FusedStepPolicy<T>::lines;
  const int n = a.n[kAxis];
  const int line_n = kAxis == 0 ? a.n[1] : a.n[0];
  const int other_n = kAxis == 2 ? a.n[1] : a.n[2];
  const std::size_t bytes = fallback_smem_bytes<T>(n);
  auto kernel = fallback_pass_kernel<T, L, kAxis>;
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  const dim3 grid((line_n + L - 1) / L, other_n - 2);
  kernel<<<grid, FusedStepPolicy<T>::threads, bytes, s>>>(a);
  ADI3D_CUDA_LAUNCH_CHECK();
}

// ---------------------------------------------------------------------------------------
// The chunked kernels: lines per block and plane slots of the x pass, lines per tile,
// threads and tile buffers of the y and z passes (rows per lane chunk: fused::kChunkCaps).
// Measured choices (adi3d_fused_tune, H100, 512^3): see fused_step.hpp.
// A 3-slot x pass (u of plane k-1 in registers, a second barrier per plane; commit
// 40f8e14, removed after) ran, against these 4 slots (adi3d_fused_tune 512, H100,
// 2026-11-23; output bitwise the same): float 0.599 against 0.529 ms, double 0.973
// against 1.023 ms for the pass but 3.055 ms for the whole step either way.
// Lines per block of the bulk x pass, same run: float 8 (0.411 ms) against 4 (0.428);
// double 4 (0.792 ms, one block of 5 warps per SM) against 8 (0.809). Float lines of
// kXWideFrom nodes or more take kXWideLines (one block of 17 warps per SM) where that
// block fits, as the planes stencil does (stencil_kernels.cu): the 512^3 float step ran
// 1.452 / 1.454 ms with them against 1.468 / 1.488 with 8 (adi3d bench gpu, H100, two
// runs each, 2026-11-23), at 384^3 0.679 / 0.675 against 0.676 / 0.668.
constexpr int kXLines = 8;
template <class T>
constexpr int kXBulkLines = sizeof(T) == 8 ? 4 : 8;
constexpr int kXWideLines = 16;
constexpr int kXWideFrom = 512;
// Built for the lines that take it: 512-546 floats (C = 17; longer lines leave no room).
template <class T, int C>
constexpr bool kXWideBuilt = sizeof(T) == 4 && C == 17;
// Double x lines of 803-1058 nodes (C = 33), whose blocks of 4 lines do not fit in
// shared memory, take blocks of 3 lines: one block of 4 warps per SM, where the 1024^3
// double step otherwise ran its x pass in the fallback kernel (a thread per line).
constexpr int kXNarrowLines = 3;
template <class T, int C>
constexpr bool kXNarrowBuilt = sizeof(T) == 8 && C == 33;
// bulk_lines: lines per block of the bulk x pass, 0 for the cp.async x pass.
inline int x_lines(int bulk_lines) { return bulk_lines ? bulk_lines : kXLines; }
// f(std::integral_constant<int, L>) for the bulk x pass of bulk_lines (non-zero) lines.
template <class T, class F>
auto with_x_bulk_lines(int bulk_lines, F&& f) {
  if (bulk_lines == kXWideLines) return f(std::integral_constant<int, kXWideLines>{});
  if (bulk_lines == kXNarrowLines) return f(std::integral_constant<int, kXNarrowLines>{});
  return f(std::integral_constant<int, kXBulkLines<T>>{});
}
constexpr int kXSlots = 4;

template <class T>
using PassKernel = void (*)(fused::PassArgs<T>);

// Two tile buffers per block (the next tile's copy in flight during the solve) for float
// y and z lines of 290 to 802 nodes and double lines of 547 to 802 where they fit
// (fused::kTwoTileShape, yz_tile_buffers); the others measured the same or slower with
// them (fused_step_kernels.cuh), and their kernels are not compiled. Their warps solve two
// lines at once (yz_pass_kernel's K: the chains interleave, the factors serve both), and
// the z pass keeps 16 loads of u in flight per thread (one block per SM: no other block
// hides their latency). 512^3 float on an H100 (adi3d_fused_tune --passes, 2026-11-24): y
// 0.398 against 0.410 ms a line at a time; z 0.596 against 0.631 with one buffer (the
// choice before), 0.634 with two and 8 loads, 0.602 with 32. The z pass with one buffer
// and the double passes of 512^3 measured slower two lines at a time. Lines of 547-802
// nodes had one buffer, in one block per SM (float: of 16 warps, by registers), its copy,
// solve and stores one after another: with two (H100, 2026-11-24, A/B in one run), the float step
// at 640^3 3.32 -> 2.96 ms (73 -> 82% of the 7-array floor, bench adi scaling), at 768^3
// 5.39 -> 4.87 (78 -> 86%); the double step at 640^3 6.34 -> 5.97 ms (bench gpu). Double
// warps too solve two lines at once there (per kernel, ncu): 640^3 the same as one at a
// time (y 1.53, z 2.83 ms), 768^3 y 3.33 -> 3.10, z 4.52 -> 4.42 (one buffer: 3.39, 4.67).
constexpr int kTwoTilesUpdateLoads = 16;

// Lines per tile and threads per block of the y and z passes: rows of 128 bytes
// (fused::kYZLines) and 8 warps, but double lines of 291-546 nodes (C = 17) take rows of
// 256 bytes, and 16 warps in the z pass; the float passes' two tile buffers take 16
// warps. 512^3 on an H100 (adi3d_fused_tune, 2026-11-23; docs/perf/fused_tiles_h100.txt),
// y / z: double 128-byte rows 0.805 (two tiles) / 1.238 ms, 256-byte rows 0.778 / 1.256,
// with 16 warps 0.780 / 1.153; float two y tiles with 16 warps 0.412 against 0.420 (the
// float z pass: 256-byte rows 0.780, 16 warps 0.700, against 0.631). Float lines of
// 547-1058 nodes (C = 21, 25, 33: one or two tiles per SM) take 16 warps in both passes:
// the float step, % of the 7-array floor at the copy bandwidth (adi3d bench adi --parts
// scaling, H100, 2026-11-24, two runs each, all C = 33 then), with 8 / 16 warps: 640^3
// 58.5 / 62.0, 768^3 70.0 / 74.5, 1024^3 73.6 / 78.0 (double keeps 8: 16 spill at 128
// registers).
template <class T, int C>
constexpr int kTileLines = sizeof(T) == 8 && C == 17 ? 32 : fused::kYZLines<T>;
template <class T, int C, int kAxis, int NB>
constexpr int kTileThreads = NB == 2           ? fused::kTwoTileThreads<T>
                             : sizeof(T) == 4 ? (C > 17 ? 512 : 256)
                                              : (C == 17 && kAxis == 2 ? 512 : 256);
template <class T, int C>
int tile_threads(int axis, int tiles) {
  if (tiles == 2) return axis == 1 ? kTileThreads<T, C, 1, 2> : kTileThreads<T, C, 2, 2>;
  return axis == 1 ? kTileThreads<T, C, 1, 1> : kTileThreads<T, C, 2, 1>;
}

// bulk_lines: the x pass of bulk copies (x_pass_bulk_kernel) with that many lines per
// block, as plan_x_bulk chose; 0: the cp.async x pass. staged: its source rows by bulk
// loads (kStagedSource), as plan_x_bulk chose. faces: the passes' face mask
// (PassArgs::unknown_faces): the kernels built for faces whose nodes are unknowns
// (kUnknownFaces) where it is not 0, the x pass's of periodic axes (kPeriodic) where an
// axis is periodic, the y or z pass's of cyclic lines (kCyclic) where its axis is.
// tiles: the y or z pass's tile buffers (yz_tile_buffers).
// The bulk x pass (x_pass_bulk_kernel) of bulk_lines lines per block, or null where that
// kernel is not built. kSums: the one that also forms a slab's interface sums
// (SlabPassArgs), built for no source or a source by bulk loads (staged) only, and no
// periodic axis.
template <class T, bool kSums>
using XBulkKernel = void (*)(std::conditional_t<kSums, fused::SlabPassArgs<T>, fused::PassArgs<T>>);
template <class T, int C, bool kUnknownFaces, bool kSums = false, bool kPeriodic = false>
XBulkKernel<T, kSums> x_bulk_kernel(bool source, int bulk_lines, bool staged) {
  static_assert(!(kSums && kPeriodic), "not built");
  return with_x_bulk_lines<T>(bulk_lines, [&](auto L) -> XBulkKernel<T, kSums> {
    if constexpr ((L.value == kXWideLines && !kXWideBuilt<T, C>) || (L.value == kXNarrowLines && !kXNarrowBuilt<T, C>)) {
      return nullptr;
    } else {
      constexpr int Lv = L.value;
      if (!source) return fused::x_pass_bulk_kernel<T, Lv, kXSlots, C, false, false, kUnknownFaces, kSums, kPeriodic>;
      if (staged) return fused::x_pass_bulk_kernel<T, Lv, kXSlots, C, true, true, kUnknownFaces, kSums, kPeriodic>;
      if constexpr (kSums)
        return nullptr;
      else
        return fused::x_pass_bulk_kernel<T, Lv, kXSlots, C, true, false, kUnknownFaces, false, kPeriodic>;
    }
  });
}
// Its shared memory.
template <class T, int C, bool kSums = false>
std::size_t x_bulk_smem_bytes(int nx, int bulk_lines, bool staged) {
  return with_x_bulk_lines<T>(bulk_lines, [&](auto L) {
    return staged ? fused::x_pass_bulk_smem_bytes<T, L.value, kXSlots, C, true, kSums>(nx)
                  : fused::x_pass_bulk_smem_bytes<T, L.value, kXSlots, C, false, kSums>(nx);
  });
}

template <class T, int C, bool kUnknownFaces, bool kPeriodic>
PassKernel<T> x_kernel(bool source, int bulk_lines, bool staged) {
  if (bulk_lines) return x_bulk_kernel<T, C, kUnknownFaces, false, kPeriodic>(source, bulk_lines, staged);
  return source ? fused::x_pass_kernel<T, kXLines, kXSlots, C, true, kUnknownFaces, kPeriodic>
                : fused::x_pass_kernel<T, kXLines, kXSlots, C, false, kUnknownFaces, kPeriodic>;
}
template <class T, int C, bool kUnknownFaces, bool kCyclic>
PassKernel<T> yz_kernel(int axis, int tiles) {
  constexpr int L = kTileLines<T, C>;
  constexpr int K2 = fused::kTwoTileLinesAtOnce;
  constexpr bool U = kUnknownFaces, Y = kCyclic;
  if constexpr (fused::kTwoTileShape<T, C>)
    if (tiles == 2)
      return axis == 1 ? fused::yz_pass_kernel<T, L, C, 1, false, 2, fused::kTwoTileThreads<T>, K2, 8, U, Y>
                       : fused::yz_pass_kernel<T, L, C, 2, false, 2, fused::kTwoTileThreads<T>, K2,
                                               kTwoTilesUpdateLoads, U, Y>;
  return axis == 1 ? fused::yz_pass_kernel<T, L, C, 1, false, 1, kTileThreads<T, C, 1, 1>, 1, 8, U, Y>
                   : fused::yz_pass_kernel<T, L, C, 2, false, 1, kTileThreads<T, C, 2, 1>, 1, 8, U, Y>;
}
template <class T, int C>
PassKernel<T> chunked_kernel(int axis, bool source, int bulk_lines = 0, int tiles = 1, bool staged = false,
                             int faces = 0) {
  if (faces == 0)
    return axis == 0 ? x_kernel<T, C, false, false>(source, bulk_lines, staged)
                     : yz_kernel<T, C, false, false>(axis, tiles);
  if (axis == 0)
    return faces >> fused::kPeriodicAxesBit ? x_kernel<T, C, true, true>(source, bulk_lines, staged)
                                            : x_kernel<T, C, true, false>(source, bulk_lines, staged);
  return (faces >> (fused::kPeriodicAxesBit + axis)) & 1 ? yz_kernel<T, C, true, true>(axis, tiles)
                                                         : yz_kernel<T, C, true, false>(axis, tiles);
}

// The bulk x pass that also forms a slab's interface sums, with the lines per block and
// source rows the plan chose for the plain one; null where it is not built (the
// distributed backend then couples the z lines itself).
template <class T>
using SlabXKernel = XBulkKernel<T, true>;
template <class T, int C>
SlabXKernel<T> x_sums_kernel(int faces, bool source, int bulk_lines, bool staged) {
  if (!bulk_lines || faces >> fused::kPeriodicAxesBit) return nullptr;
  return faces ? x_bulk_kernel<T, C, true, true>(source, bulk_lines, staged)
               : x_bulk_kernel<T, C, false, true>(source, bulk_lines, staged);
}

// cyclic: a y or z pass of cyclic lines (kCyclic), whose tiles keep their correction's terms.
template <class T, int C>
std::size_t chunked_smem_bytes(int axis, int n, int bulk_lines = 0, int tiles = 1, bool staged = false,
                               bool cyclic = false) {
  if (axis == 0 && bulk_lines) return x_bulk_smem_bytes<T, C>(n, bulk_lines, staged);
  if (axis == 0) return fused::x_pass_smem_bytes<T, kXLines, kXSlots, C>(n);
  constexpr int L = kTileLines<T, C>;
  return tiles == 2 ? fused::yz_pass_smem_bytes<T, L, C, 2>(n, cyclic) : fused::yz_pass_smem_bytes<T, L, C>(n, cyclic);
}

// Tile buffers of a y or z pass: two where fused::kTwoTileShape and they fit in shared
// memory, else one.
template <class T, int C>
int yz_tile_buffers(int axis, int n, int optin, bool cyclic) {
  if (axis == 0 || !fused::kTwoTileShape<T, C>) return 1;
  return chunked_smem_bytes<T, C>(axis, n, false, 2, false, cyclic) <= static_cast<std::size_t>(optin) ? 2 : 1;
}

// The lines of a pass: n nodes, R unknowns; their chunk capacity is that of lines of R
// unknowns between Dirichlet ends, R + 2 nodes (`solved`, which sizes the y and z tiles;
// the x pass's slot rows hold all n); cyclic: a periodic axis.
struct PassLines {
  int n, solved;
  bool cyclic;
  int cap() const { return fused::chunk_cap(solved); }
  int smem_n(int axis) const { return axis == 0 ? n : solved; }
};
template <class T>
PassLines pass_lines(const OperatorView<T>& op, int axis) {
  return {op.n[axis], fused::unknowns(op, axis) + 2, op.lo[axis] == BoundaryKind::periodic};
}

// Which kernel takes the lines of this axis: 1 chunked, 2 fallback, 0 none.
template <class T>
int pass_kind(int axis, PassLines lines, int optin) {
  if (lines.solved < 3) return 1;  // nothing to solve
  const int cap = lines.cap();
  if (cap != 0 && fused::with_chunk_cap(cap, [&](auto C) {
        return chunked_smem_bytes<T, C.value>(axis, lines.smem_n(axis), 0, 1, false, lines.cyclic);
      }) <= static_cast<std::size_t>(optin))
    return 1;
  if (fallback_smem_bytes<T>(lines.n) <= static_cast<std::size_t>(optin)) return 2;
  return 0;
}

// The x pass by bulk copies: rows of nx values a whole number of 16-byte units, the plane
// slots and staging rows within shared memory, and a device and build that run it.
// Returns its lines per block (kXWideLines, kXBulkLines or kXNarrowLines), or 0 where it
// does not run; staged: whether a source's rows come by bulk loads too (where their
// second staging rows fit beside the lines'; all but float lines of over 802 nodes).
template <class T>
int plan_x_bulk(PassLines x, int faces, int device, int optin, bool source, bool& staged) {
  const int nx = x.n, cap = x.cap();
  staged = false;
  if ((static_cast<std::size_t>(nx) * sizeof(T)) % 16 != 0 || cap == 0) return 0;
  auto runs = [&](int lines, bool with_staged) {
    return fused::with_chunk_cap(cap, [&](auto C) {
      const PassKernel<T> kernel = chunked_kernel<T, C.value>(0, source, lines, 1, with_staged, faces);
      return kernel && chunked_smem_bytes<T, C.value>(0, nx, lines, 1, with_staged) <= static_cast<std::size_t>(optin) &&
             bulk_copies_usable(reinterpret_cast<const void*>(kernel), device);
    });
  };
  auto take = [&](int lines) {
    if (source && runs(lines, true)) return staged = true;
    return runs(lines, false);
  };
  if (sizeof(T) == 4 && nx >= kXWideFrom && take(kXWideLines)) return kXWideLines;
  if (take(kXBulkLines<T>)) return kXBulkLines<T>;
  return take(kXNarrowLines) ? kXNarrowLines : 0;
}

template <class T>
using XYKernel = void (*)(fused::XYArgs<T>);

// The merged x and y kernel for x and y lines of chunk capacity cap, or null. Built for
// float lines of 163 to 546 nodes (caps 9 and 17): its two roles' shared memory then
// allows two blocks per SM. In double the x role alone needs more than half an SM's
// shared memory at 512 nodes (4 plane slots of 6 rows and 4 staging rows of 4 KB).
template <class T>
XYKernel<T> xy_kernel(int cap, bool source) {
  if constexpr (sizeof(T) == 4) {
    if (cap == 9) return source ? fused::xy_pass_kernel<T, 9, true> : fused::xy_pass_kernel<T, 9, false>;
    if (cap == 17) return source ? fused::xy_pass_kernel<T, 17, true> : fused::xy_pass_kernel<T, 17, false>;
  }
  return nullptr;
}

}  // namespace

template <class T>
bool FusedDouglasStep<T>::applies(const OperatorView<T>& op, int device) const {
  // Robin faces change the end rows only: of the shared factors of constant alpha (one h
  // over each face), of each line's rows with an alpha field (RobinEnds, an h field too).
  // Lines of constant alpha that an h field makes differ keep the unfused step.
  if (has_robin(op) && !op.alpha_field && !(lines_alike(op, 0) && lines_alike(op, 1) && lines_alike(op, 2)))
    return false;
  if (op.alpha_field) return fused_variable_applies(op, device);
  for (int axis = 0; axis < 3; ++axis)
    if (op.n[axis] < 1) return false;
  int optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int unknown_faces = fused::unknown_face_mask(op);
  for (int axis = 0; axis < 3; ++axis) {
    // No node inside to mirror, or a cyclic line of fewer than the 3 nodes its factors take.
    if (((unknown_faces >> face_index(axis, 0)) & 3) && op.n[axis] < 3) return false;
    if (pass_kind<T>(axis, pass_lines(op, axis), optin) == 0) return false;
  }
  return true;
}

template <class T>
void FusedDouglasStep<T>::make_plan(const OperatorView<T>& op, int device, bool source, bool aligned) {
  Plan& p = plan_;
  for (int a = 0; a < 3; ++a) p.n[a] = op.n[a];
  p.device = device;
  p.source = source;
  p.aligned = aligned;
  p.unknown_faces = fused::unknown_face_mask(op);
  const int faces = p.unknown_faces;
  int optin = 0, sms = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  p.sms = sms;
  int unknowns[3];
  for (int axis = 0; axis < 3; ++axis) unknowns[axis] = fused::unknowns(op, axis);
  for (int axis = 0; axis < 3; ++axis) {
    const PassLines lines = pass_lines(op, axis);
    const int other = axis == 2 ? 1 : 2;
    p.kind[axis] = pass_kind<T>(axis, lines, optin);
    p.cap[axis] = lines.cap();
    p.grid[axis][1] = 1;
    bool staged = false;
    const int bulk = axis == 0 && aligned ? plan_x_bulk<T>(lines, faces, device, optin, source, staged) : 0;
    // The bulk x pass's blocks of fewer lines fit where the cp.async pass's may not
    // (double x lines of 675-802 nodes): without this they took the fallback kernel,
    // 15.5 of the 21.1 ms of the 768^3 double step (H100, ncu).
    if (bulk) p.kind[axis] = 1;
    if (p.kind[axis] == 2) continue;  // launch_fallback_pass sizes its own launch
    if (axis == 0) {
      p.x_bulk_lines = bulk;
      p.x_staged_source = staged;
    }
    const int na = lines.smem_n(axis);
    const int tiles = p.tiles[axis] = fused::with_chunk_cap(
        p.cap[axis], [&](auto C) { return yz_tile_buffers<T, C.value>(axis, na, optin, lines.cyclic); });
    const PassKernel<T> kernel = fused::with_chunk_cap(p.cap[axis], [&](auto C) {
      return chunked_kernel<T, C.value>(axis, source, bulk, tiles, staged, faces);
    });
    p.smem[axis] = fused::with_chunk_cap(p.cap[axis], [&](auto C) {
      return chunked_smem_bytes<T, C.value>(axis, na, bulk, tiles, staged, lines.cyclic);
    });
    p.threads[axis] = axis == 0 ? 32 * (x_lines(bulk) + (bulk ? 1 : 0))
                                : fused::with_chunk_cap(p.cap[axis], [&](auto C) { return tile_threads<T, C.value>(axis, tiles); });
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(p.smem[axis])));
    int per_sm = 0;
    ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, p.threads[axis],
                                                                   p.smem[axis]));
    p.per_sm[axis] = std::max(1, per_sm);
    const int resident = p.per_sm[axis] * sms;
    if (axis == 0) {
      const int tiles = (unknowns[1] + x_lines(bulk) - 1) / x_lines(bulk);
      const int planes = unknowns[2];
      p.kseg = ring_planes_per_block(tiles, planes, resident);
      p.grid[0][0] = tiles;
      p.grid[0][1] = (planes + p.kseg - 1) / p.kseg;
    } else {
      const int L = fused::with_chunk_cap(p.cap[axis], [](auto C) { return kTileLines<T, C.value>; });
      p.grid[axis][0] = std::min((op.n[0] + L - 1) / L * unknowns[other], resident);
    }
  }
  // The merged kernel solves between Dirichlet faces only.
  p.xy = false;
  if (faces == 0) plan_xy(optin, sms);
}

// The merged x and y kernel where it is built for these lines, the bulk x pass runs and
// two of its blocks fit on an SM. The planes are split into ranges so that about 1.5 x
// blocks per SM stream them (one x block per x tile and range): 512^3 float, H100,
// adi3d_fused_tune (2026-11-23), x + y in 1.69 / 1.09 / 0.94 / 0.98 ms with 64 / 128 /
// 192 / 256 x blocks against 0.41 + 0.42 ms for the two passes apart.
template <class T>
void FusedDouglasStep<T>::plan_xy(int optin, int sms) {
  Plan& p = plan_;
  const XYKernel<T> kernel =
      p.merge_xy && p.x_bulk_lines && p.kind[1] == 1 && p.cap[0] == p.cap[1] ? xy_kernel<T>(p.cap[0], p.source) : nullptr;
  if (!kernel || !bulk_copies_usable(reinterpret_cast<const void*>(kernel), p.device)) return;
  constexpr int L = fused::kXYLines<T>;
  const std::size_t smem =
      fused::with_chunk_cap(p.cap[0], [&](auto C) { return fused::xy_pass_smem_bytes<T, C.value>(p.n[0], p.n[1]); });
  const int tiles_j = fused::xy_x_tiles<T>(p.n[1]), planes = p.n[2] - 2;
  const int x_blocks = 3 * sms / 2;
  if (smem > static_cast<std::size_t>(optin) || tiles_j > x_blocks || planes < 1) return;
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * (L + 1), smem));
  if (per_sm < 2) return;
  const fused::XYRanges ranges =
      fused::xy_ranges(planes, std::max(1, std::min(planes, (x_blocks + tiles_j / 2) / tiles_j)));
  p.xy_kseg = ranges.kseg;
  p.xy_partitions = ranges.count;
  p.xy_grid = per_sm * sms;
  p.xy_smem = smem;
  p.xy = true;
}

template <class T>
bool FusedDouglasStep<T>::plan_for(const OperatorView<T>& op, int device, bool source, bool aligned, bool merge) {
  const int unknown_faces = fused::unknown_face_mask(op);
  if (plan_.device != device || plan_.source != source || plan_.aligned != aligned || plan_.n[0] != op.n[0] ||
      plan_.n[1] != op.n[1] || plan_.n[2] != op.n[2] || plan_.unknown_faces != unknown_faces ||
      plan_.merge_xy != merge) {
    plan_.merge_xy = merge;
    make_plan(op, device, source, aligned);
  }
  // The fallback kernel solves between Dirichlet faces only (no Neumann end, no cyclic
  // line); whether a pass takes it is known with the arrays' alignment (the bulk x pass
  // fits lines the cp.async one does not).
  return !(unknown_faces && (plan_.kind[0] == 2 || plan_.kind[1] == 2 || plan_.kind[2] == 2));
}

template <class T>
bool FusedDouglasStep<T>::prepare(const OperatorView<T>& op, const T* u, const T* f, const T* d, T tau, int device,
                                  bool merge, CUstream_st* stream) {
  // (f too: the bulk x pass may load its rows.)
  const bool aligned = aligned16(u) && aligned16(d) && (!f || aligned16(f));
  if (!plan_for(op, device, f != nullptr, aligned, merge)) return false;

  std::size_t total = 0;
  int cap[3];
  for (int axis = 0; axis < 3; ++axis) {
    cap[axis] = pass_lines(op, axis).cap();
    pass_offset_[axis] = total;
    total += fused::pass_factor_count(op.n[axis], cap[axis], op.lo[axis] == BoundaryKind::periodic);
  }
  std::vector<T> h(total, T(0));
  for (int axis = 0; axis < 3; ++axis)
    pass_s_[axis] = fused::pass_factors(op, axis, tau, cap[axis], h.data() + pass_offset_[axis]);
  cudaStream_t s = stream;
  if (h != host_factors_ || factors_.size() < total) {
    if (factors_.size() < total) {
      ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // queued passes may still read them
      factors_ = Array<T>();
      factors_ = device_allocate<T>(total);
    }
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(factors_.data(), h.data(), total * sizeof(T),
                                     cudaMemcpyHostToDevice, s));
    // h is pageable and goes out of scope: wait for the copy.
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
    host_factors_ = std::move(h);
  }
  return true;
}

namespace {

// The passes' arguments of one step (FusedDouglasStep::prepare made the plan and factors).
template <class T>
fused::PassArgs<T> step_args(const OperatorView<T>& op, T* u, const T* f, T dt, T* d, int kseg) {
  fused::PassArgs<T> args{};
  for (int axis = 0; axis < 3; ++axis) {
    const std::size_t stride = fused::axis_stride(op.n, axis);
    args.n[axis] = op.n[axis];
    args.w[axis] = axis_row(op, axis, 1, stride, stride).w.wm;
  }
  args.unknown_faces = fused::unknown_face_mask(op);
  args.dt = dt;
  args.u_in = u;
  args.f = f;
  args.d = d;
  args.u = u;
  args.kseg = kseg;
  args.vec16 = (op.n[0] * sizeof(T)) % 16 == 0 && aligned16(u);
  return args;
}

}  // namespace

template <class T>
bool FusedDouglasStep<T>::run(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d,
                              CUstream_st* stream) {
  int device = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  last_variable_x_pass_ = false;
  if (!applies(op, device)) return false;
  // No unknowns (every node lies on a Dirichlet face): du = 0.
  for (int axis = 0; axis < 3; ++axis)
    if (fused::last_unknown(op, axis) < fused::first_unknown(op, axis)) return true;
  if (op.alpha_field) {
    const int x_kernels = fused_variable_step(op, u, f, dt, tau, d, device, stream, variable_x_pass_);
    last_variable_x_pass_ = x_kernels == 1;
    return x_kernels != 0;
  }
  if (!prepare(op, u, f, d, tau, device, merge_xy_, stream)) return false;
  const bool source = f != nullptr;
  cudaStream_t s = stream;
  fused::PassArgs<T> args = step_args(op, u, f, dt, d, plan_.kseg);
  auto for_axis = [&](fused::PassArgs<T>& a, int axis) {
    a.factors = factors_.data() + pass_offset_[axis];
    a.chunk_factors = a.factors + 3 * op.n[axis];
    a.s = pass_s_[axis];
  };
  last_merged_xy_ = plan_.xy;
  if (plan_.xy) {
    const std::size_t words = fused::xy_sync_words(op.n[2]);
    if (xy_sync_.size() < words) {
      ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // a queued kernel may still count in it
      xy_sync_ = Array<unsigned>();
      xy_sync_ = device_allocate<unsigned>(words);
    }
    ADI3D_CUDA_CHECK(cudaMemsetAsync(xy_sync_.data(), 0, words * sizeof(unsigned), s));
    fused::XYArgs<T> xa{};
    xa.x = args;
    for_axis(xa.x, 0);
    xa.x.kseg = plan_.xy_kseg;
    fused::PassArgs<T> y = args;
    for_axis(y, 1);
    xa.y_factors = y.chunk_factors;
    xa.y_s = y.s;
    xa.partitions = plan_.xy_partitions;
    xa.sync = xy_sync_.data();
    const XYKernel<T> kernel = xy_kernel<T>(plan_.cap[0], source);
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(plan_.xy_smem)));
    kernel<<<plan_.xy_grid, 32 * (fused::kXYLines<T> + 1), plan_.xy_smem, s>>>(xa);
    ADI3D_CUDA_LAUNCH_CHECK();
  }
  for (int axis = plan_.xy ? 2 : 0; axis < 3; ++axis) {
    for_axis(args, axis);
    if (plan_.kind[axis] == 2) {
      if (axis == 0) launch_fallback_pass<T, 0>(args, s);
      if (axis == 1) launch_fallback_pass<T, 1>(args, s);
      if (axis == 2) launch_fallback_pass<T, 2>(args, s);
      continue;
    }
    launch_chunked_pass(args, axis, s);
  }
  return true;
}

template <class T>
void FusedDouglasStep<T>::launch_chunked_pass(const fused::PassArgs<T>& args, int axis, CUstream_st* stream,
                                              int grid_x) const {
  const PassKernel<T> kernel = fused::with_chunk_cap(plan_.cap[axis], [&](auto C) {
    return chunked_kernel<T, C.value>(axis, plan_.source, axis == 0 ? plan_.x_bulk_lines : 0, plan_.tiles[axis],
                                      axis == 0 && plan_.x_staged_source, plan_.unknown_faces);
  });
  // Set again: another instance (another grid) may have set this kernel's limit lower.
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(plan_.smem[axis])));
  const dim3 grid(grid_x > 0 ? grid_x : plan_.grid[axis][0], plan_.grid[axis][1]);
  kernel<<<grid, plan_.threads[axis], plan_.smem[axis], stream>>>(args);
  ADI3D_CUDA_LAUNCH_CHECK();
}

// Multiprocessors the fused slab step's y pass leaves to the reduced systems beside it.
constexpr int kSideSMs = 8;
// ADI3D_SLAB_SIDE_SMS overrides it, for measuring the choice (docs/perf).
int side_sms() {
  static const int n = [] {
    const char* v = std::getenv("ADI3D_SLAB_SIDE_SMS");
    return v ? std::max(0, std::atoi(v)) : kSideSMs;
  }();
  return n;
}

// run_slab's state on one device: the weights of the slab's lines, the buffers of the
// interface sums and of the reduced systems, the stream that solves them beside the y
// pass, and the events that order the two streams (and time them).
template <class T>
struct FusedDouglasStep<T>::Slab {
  int device = -1;
  cudaStream_t side = nullptr;
  cudaEvent_t x_done = nullptr, sums_done = nullptr, gather_done = nullptr, y_done = nullptr, step_done = nullptr;
  // What the weights were made for: tau, alpha and 1/h^2 along z, n_z, the z faces, the
  // owned rows and the ghosts.
  std::vector<double> key;
  fused::SlabWeights<T> host;
  // 2 n_z, this rank's vF, vL, wF, wL, then the combinations of the ghost values below and
  // above (2 ranks each)
  Array<T> weights;
  Array<T> partials, sums, message, gathered;
  std::vector<std::size_t> zeroed_for;  // plane, segments and Neumann faces partials were zeroed for

  explicit Slab(int d) : device(d) {
    // The greatest priority: its blocks go first as the passes' blocks retire.
    int least = 0, greatest = 0;
    ADI3D_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    ADI3D_CUDA_CHECK(cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, greatest));
    for (cudaEvent_t* e : {&x_done, &sums_done, &gather_done, &y_done, &step_done})
      ADI3D_CUDA_CHECK(cudaEventCreate(e));
  }
  ~Slab() {
    // Destructors do not throw: a failure here has been reported by the work that caused it.
    for (cudaEvent_t e : {x_done, sums_done, gather_done, y_done, step_done}) cudaEventDestroy(e);
    cudaStreamDestroy(side);
  }
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  // buffer holds at least n values (zeroed when it is made).
  static void reserve(Array<T>& buffer, std::size_t n, cudaStream_t s) {
    if (buffer.size() >= n) return;
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // queued work may still use it
    buffer = Array<T>();
    buffer = device_allocate<T>(n);
    ADI3D_CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, n * sizeof(T), s));
  }
};

template <class T>
bool FusedDouglasStep<T>::run_slab(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d,
                                   CUstream_st* stream, SlabCoupling<T>& coupling) {
  int device = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  if (op.alpha_field || op.z_lines_differ_elsewhere || !applies(op, device) || coupling.lines().per_line) return false;
  for (int axis = 0; axis < 3; ++axis)
    if (fused::last_unknown(op, axis) < fused::first_unknown(op, axis)) return false;
  if (!prepare(op, u, f, d, tau, device, false, stream)) return false;
  if (plan_.kind[0] != 1 || plan_.kind[1] != 1 || plan_.kind[2] != 1) return false;
  const int unknown_faces = plan_.unknown_faces;
  const SlabXKernel<T> x_kernel = fused::with_chunk_cap(plan_.cap[0], [&](auto C) {
    return x_sums_kernel<T, C.value>(unknown_faces, plan_.source, plan_.x_bulk_lines, plan_.x_staged_source);
  });
  const std::size_t x_smem = fused::with_chunk_cap(plan_.cap[0], [&](auto C) {
    return x_bulk_smem_bytes<T, C.value, true>(op.n[0], plan_.x_bulk_lines, plan_.x_staged_source);
  });
  int optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (!x_kernel || x_smem > static_cast<std::size_t>(optin)) return false;

  cudaStream_t s = stream;
  if (!slab_ || slab_->device != device) slab_ = std::make_shared<Slab>(device);
  Slab& sl = *slab_;
  const ReducedLines lines = coupling.lines();
  const int nz = op.n[2];
  const int lo = fused::first_unknown(op, 2), hi = fused::last_unknown(op, 2);
  const std::vector<double> key{static_cast<double>(tau), static_cast<double>(op.alpha[2]),
                                static_cast<double>(op.inv_h2[2]), static_cast<double>(nz),
                                static_cast<double>(lo), static_cast<double>(hi),
                                static_cast<double>(coupling.row_first()), static_cast<double>(coupling.row_last()),
                                static_cast<double>(coupling.ghost_lo()), static_cast<double>(coupling.ghost_hi())};
  // The weights of the sums and this rank's coupling coefficients, set once per line
  // matrix; the combinations that make the ghost values follow from every rank's
  // coefficients, which come with the first gather (below).
  const bool new_lines = key != sl.key;
  if (new_lines) {
    sl.host = fused::slab_weights(op, tau, coupling.row_first(), coupling.row_last(), coupling.ghost_lo(),
                                  coupling.ghost_hi());
    std::vector<T> w = sl.host.w;
    w.insert(w.end(), {sl.host.v_first, sl.host.v_last, sl.host.w_first, sl.host.w_last});
    w.resize(w.size() + 4 * lines.ranks, T(0));  // the combinations
    Slab::reserve(sl.weights, w.size(), s);
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(sl.weights.data(), w.data(), w.size() * sizeof(T), cudaMemcpyHostToDevice, s));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // w is pageable and goes out of scope
    sl.key = key;
  }
  const T* coefficients = sl.weights.data() + 2 * nz;
  T* const combinations = sl.weights.data() + 2 * nz + 4;
  const T* below = combinations;
  const T* above = combinations + 2 * lines.ranks;
  const std::size_t plane = static_cast<std::size_t>(op.n[0]) * op.n[1];
  const int segments = plan_.grid[0][1];
  const std::size_t size = lines.message_size();
  Slab::reserve(sl.partials, 2 * plane * segments, s);
  Slab::reserve(sl.sums, 4 * plane, s);
  Slab::reserve(sl.message, size, s);
  Slab::reserve(sl.gathered, size * lines.ranks, s);
  // The x pass writes the sums of its unknown nodes only: the others must read 0.
  const std::vector<std::size_t> shape{plane, static_cast<std::size_t>(segments),
                                       static_cast<std::size_t>(unknown_faces)};
  if (shape != sl.zeroed_for) {
    ADI3D_CUDA_CHECK(cudaMemsetAsync(sl.partials.data(), 0, sl.partials.size() * sizeof(T), s));
    sl.zeroed_for = shape;
  }

  fused::PassArgs<T> args = step_args(op, u, f, dt, d, plan_.kseg);
  auto for_axis = [&](fused::PassArgs<T>& a, int axis) {
    a.factors = factors_.data() + pass_offset_[axis];
    a.chunk_factors = a.factors + 3 * op.n[axis];
    a.s = pass_s_[axis];
  };
  // x pass: d, and each block's partial sums.
  fused::SlabPassArgs<T> xa{};
  static_cast<fused::PassArgs<T>&>(xa) = args;
  for_axis(xa, 0);
  xa.weights = sl.weights.data();
  xa.sums = sl.partials.data();
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(x_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(x_smem)));
  x_kernel<<<dim3(plan_.grid[0][0], segments), plan_.threads[0], x_smem, s>>>(xa);
  ADI3D_CUDA_LAUNCH_CHECK();
  ADI3D_CUDA_CHECK(cudaEventRecord(sl.x_done, s));

  // Beside the y pass: the sums (planes 1 and 2 of a 4-plane slab), solved along y as the
  // y pass solves d (the sums are linear in d, the y and z solves commute), into this
  // rank's message with its coefficients, and every rank's gathered. (A rank whose
  // backend declines this step couples its lines by the same messages: the ranks need
  // not agree on the path.)
  ADI3D_CUDA_CHECK(cudaStreamWaitEvent(sl.side, sl.x_done, 0));
  launch_sum_blocks(sl.partials.data(), segments, 2 * plane, sl.sums.data() + plane, sl.side);
  fused::PassArgs<T> ys = args;
  for_axis(ys, 1);
  ys.n[2] = 4;
  ys.d = sl.sums.data();
  ys.unknown_faces &= ~(3 << face_index(2, 0));  // planes 1 and 2: no z face
  const int tiles_i = (op.n[0] + fused::kYZLines<T> - 1) / fused::kYZLines<T>;
  launch_chunked_pass(ys, 1, sl.side, std::min(plan_.grid[1][0], 2 * tiles_i));
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(sl.message.data(), sl.sums.data() + plane, 2 * plane * sizeof(T),
                                   cudaMemcpyDeviceToDevice, sl.side));
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(sl.message.data() + lines.v_first(), coefficients, 4 * sizeof(T),
                                   cudaMemcpyDeviceToDevice, sl.side));
  const bool timed = coupling.timed();
  if (timed) ADI3D_CUDA_CHECK(cudaEventRecord(sl.sums_done, sl.side));
  coupling.gather(sl.message.data(), sl.gathered.data(), sl.side);
  ADI3D_CUDA_CHECK(cudaEventRecord(sl.gather_done, sl.side));

  // y pass, on all but side_sms() multiprocessors (its blocks are persistent: on all of
  // them they would hold the side stream's kernels and the gather back until it ends);
  // the ghost values, combined from the gathered sums, join the rows beside the ghost
  // planes; z pass and update.
  for_axis(args, 1);
  launch_chunked_pass(args, 1, s,
                      std::min(plan_.grid[1][0], std::max(1, plan_.sms - side_sms()) * plan_.per_sm[1]));
  ADI3D_CUDA_CHECK(cudaEventRecord(sl.y_done, s));
  if (new_lines) {
    // Every rank's coefficients, from the gathered messages, make the combinations.
    ADI3D_CUDA_CHECK(cudaEventSynchronize(sl.gather_done));
    std::vector<T> each(4 * static_cast<std::size_t>(lines.ranks));
    ADI3D_CUDA_CHECK(cudaMemcpy2D(each.data(), 4 * sizeof(T), sl.gathered.data() + lines.v_first(), size * sizeof(T),
                                  4 * sizeof(T), lines.ranks, cudaMemcpyDeviceToHost));
    const ReducedCombination combination = reduced_combination(lines, std::vector<double>(each.begin(), each.end()));
    std::vector<T> w(combination.below.begin(), combination.below.end());
    w.insert(w.end(), combination.above.begin(), combination.above.end());
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(combinations, w.data(), w.size() * sizeof(T), cudaMemcpyHostToDevice, s));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));  // w is pageable
  }
  ADI3D_CUDA_CHECK(cudaStreamWaitEvent(s, sl.gather_done, 0));
  launch_add_ghost_couplings(sl.gathered.data(), size, plane, lines.ranks, below, above, sl.host.s_lo,
                             coupling.ghost_lo() ? d + lo * plane : nullptr, sl.host.s_hi,
                             coupling.ghost_hi() ? d + hi * plane : nullptr, s);
  for_axis(args, 2);
  launch_chunked_pass(args, 2, s);

  if (timed) {
    ADI3D_CUDA_CHECK(cudaEventRecord(sl.step_done, s));
    ADI3D_CUDA_CHECK(cudaEventSynchronize(sl.step_done));
    auto seconds = [&](cudaEvent_t from, cudaEvent_t to) {
      float ms = 0;
      ADI3D_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
      return 1e-3 * ms;
    };
    SlabStepTimes t;
    t.sums = seconds(sl.x_done, sl.sums_done);
    t.reduced = seconds(sl.x_done, sl.gather_done);
    t.waited = std::max(0.0, seconds(sl.y_done, sl.gather_done));
    coupling.record(t);
  }
  return true;
}

template class FusedDouglasStep<float>;
template class FusedDouglasStep<double>;

}  // namespace adi3d::cuda
