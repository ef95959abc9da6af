#pragma once
// Kernels of the fused Douglas step (fused_step.cu; fused_step_tune.cu times variants).
// Internal to the CUDA backend.
//
// Line solves: every line of a pass has the same tridiagonal matrix (constant alpha), so
// the Thomas factors are shared. A warp solves one line: lane p owns the rows
// [p C, p C + C) (C odd, so the 32 lanes' rows fall in 32 different shared-memory banks;
// rows from R to 32 C are padding) and runs the forward recurrence
// y_r = alpha_r d_r + beta_r y_{r-1} on its chunk from y = 0; a warp scan of the chunks'
// affine maps (5 shuffle steps) gives each chunk its true start value, whose response
// Gf_r (a host-made product of the betas) is added on the way back, where the backward
// recurrence x_r = y_r + beta_r x_{r+1} runs from x = 0; a second scan and the response
// Gb_r finish it. alpha_r = inv_r, beta_r = -a inv_r = s alpha_r (a = c on the interior
// rows of constant alpha). The dependent chain is 2 C + 10 steps instead of 2 n, and a
// padding row (alpha = 0, so beta = Gf = Gb = 0) solves to 0 from any finite data.
//
// Pass x (k-marching): a block owns L neighbouring x lines (j0..j0+L-1) and a range of
// planes k. Planes of u with a one-line halo in j ((L+2) rows of nx values) stream through
// a ring of NS shared-memory slots by cp.async, one plane ahead of the plane being solved,
// so every u value comes from DRAM once and from L2 about (L+2)/L times; the rhs
// dt (A u + f) is formed from the slots directly in the chunk layout of the solve. Warp w
// forms, solves and stores line j0+w; slot rows are padded to 32 C + 2 values so that
// padding rows read finite data without bounds checks.
//
// Passes y and z (persistent): a block walks tiles of L lines (consecutive i, L sizeof(T)
// = 128 bytes per row) by R = n-2 interior rows, rows padded to L+1 values (the banks of
// the chunk-wise solve and of the row-wise copies are then all distinct).
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/common/plane_ring.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

namespace adi3d::cuda::fused {

// ---------------------------------------------------------------------------------------
// Warp line solve (see the file comment), of K lines with the same matrix at once: their
// dependent chains interleave, and the factors and the scans' products serve them all.
// v[k][q] holds row p C + q of line k (p: lane); on return it holds the solution. al, gf,
// gb: this lane's C values of alpha, Gf and Gb (pointers into shared memory or arrays in
// registers), Gf_r = prod beta over [p C, r] and Gb_r = prod beta over [r, p C + C - 1].
// Every lane of the warp must call it, converged.
template <class T, int K, int C, class F>
__device__ __forceinline__ void warp_solve_lines(T (&v)[K][C], const F& al, const F& gf, const F& gb, T s) {
  const int lane = threadIdx.x & 31;
  constexpr unsigned kAll = 0xffffffffu;
  T y[K];
#pragma unroll
  for (int k = 0; k < K; ++k) y[k] = T(0);
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T a = al[q];
    const T sa = s * a;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      y[k] = fma(sa, y[k], a * v[k][q]);
      v[k][q] = y[k];
    }
  }
  // Inclusive scan of the chunks' maps y_in -> A y_in + y over the lanes.
  T A = gf[C - 1];
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T Ap = __shfl_up_sync(kAll, A, d);
    T Bp[K];
#pragma unroll
    for (int k = 0; k < K; ++k) Bp[k] = __shfl_up_sync(kAll, y[k], d);
    if (lane >= d) {
#pragma unroll
      for (int k = 0; k < K; ++k) y[k] = fma(A, Bp[k], y[k]);
      A *= Ap;
    }
  }
  T carry[K], x[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    carry[k] = __shfl_up_sync(kAll, y[k], 1);  // y before this chunk
    if (lane == 0) carry[k] = T(0);
    x[k] = T(0);
  }
#pragma unroll
  for (int q = C - 1; q >= 0; --q) {
    const T g = gf[q];
    const T sa = s * al[q];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const T yq = fma(g, carry[k], v[k][q]);
      x[k] = fma(sa, x[k], yq);
      v[k][q] = x[k];
    }
  }
  A = gb[0];
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T An = __shfl_down_sync(kAll, A, d);
    T Bn[K];
#pragma unroll
    for (int k = 0; k < K; ++k) Bn[k] = __shfl_down_sync(kAll, x[k], d);
    if (lane + d < 32) {
#pragma unroll
      for (int k = 0; k < K; ++k) x[k] = fma(A, Bn[k], x[k]);
      A *= An;
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    carry[k] = __shfl_down_sync(kAll, x[k], 1);  // x after this chunk
    if (lane == 31) carry[k] = T(0);
  }
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T g = gb[q];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k][q] = fma(g, carry[k], v[k][q]);
  }
}
// One line: v[q] holds row p C + q.
template <class T, int C, class F>
__device__ __forceinline__ void warp_solve(T (&v)[C], const F& al, const F& gf, const F& gb, T s) {
  warp_solve_lines<T, 1, C>(reinterpret_cast<T(&)[1][C]>(v), al, gf, gb, s);
}
// The same with the factors of the pass in shared memory: alpha[32 C], Gf[32 C], Gb[32 C].
template <class T, int C>
__device__ __forceinline__ void warp_solve(T (&v)[C], const T* fac, T s) {
  const T* al = fac + (threadIdx.x & 31) * C;
  warp_solve<T, C>(v, al, al + 32 * C, al + 64 * C, s);
}

// The 3 x 32 C solve factors of this pass to shared memory.
template <class T, int C>
__device__ __forceinline__ void load_factors(const T* factors, T* fac) {
  for (int e = threadIdx.x; e < 3 * 32 * C; e += blockDim.x) fac[e] = factors[e];
}

template <class T>
struct PassArgs {
  int n[3];
  T w[3];                  // interior row weights per axis
  T dt;
  const T* u_in;           // u^n (x pass)
  const T* f;              // source or null (x pass)
  T* d;                    // stage array
  T* u;                    // u, updated in place (z pass)
  const T* factors;        // fallback kernel, this axis: inv[n], a*inv[n], cp[n]
  const T* chunk_factors;  // warp solve, this axis: alpha, Gf, Gb (3 x 32 C)
  T s;                     // this axis: -a = -c of the interior rows (tau w)
  int kseg;                // x pass: planes per block
  int vec16;               // x pass: rows of u are 16-byte aligned (16-byte copies)
  // The faces of the fused passes whose nodes are unknowns too (first_unknown_of), bit
  // face_index (2 axis + side): Neumann faces, and both faces of a periodic axis, which
  // also sets bit kPeriodicAxesBit + axis (unknown_face_mask). A mask, not a span: 24
  // more bytes of kernel parameters took the double bulk x pass of 675-802-node lines
  // from 0 to 100-150 bytes of spills (ptxas, 255 registers).
  int unknown_faces;
};

// Plain y/z solves (yz_pass_kernel with kSolveOnly; a type of its own, so that the fused
// passes' arguments keep their layout): the nodes [first, last] per axis that are
// solved: the line's unknowns along its axis (1 or 0 after a Dirichlet or Neumann end,
// n-2 or n-1 before one), the columns and planes of the lines on the others.
template <class T>
struct SolveArgs : PassArgs<T> {
  int first[3];
  int last[3];
};
// The x pass of one slab of a split z axis (fused_slab_step.hpp; x_pass_bulk_kernel with
// kSums): besides d it forms the slab's interface sums of every line node, the sums over
// its planes of d weighted by weights[k] (the first) and weights[n_z + k] (the second).
// Block b of the grid's y dimension writes its planes' partial sums to
// sums[(2 b + side) n_x n_y + node] (a reduction over the blocks follows: deterministic,
// no atomics). A type of its own, so that PassArgs keeps its size (see unknown_faces).
template <class T>
struct SlabPassArgs : PassArgs<T> {
  const T* weights;
  T* sums;
};

// Cyclic lines (a periodic axis: every node an unknown) by Sherman-Morrison: the factors
// solve the modified matrix, and each line's solution y is stored as y - c z, c = (y_0 +
// corner_ratio y_{n-1}) inv_denominator. The correction's terms follow the warp solve's
// factors in chunk_factors (cyclic_tile_line_factors): corner_ratio, inv_denominator, z (n
// values; the fused passes' factors pad it to 32 C and add z by warp rows for the x pass:
// kCyclicZByRows), so that SolveArgs, and with it the other plain solves' kernels, stay
// as they were.
template <class T, int C>
__device__ __forceinline__ const T* cyclic_terms(const T* chunk_factors) {
  return chunk_factors + 3 * 32 * C;
}
// c from the terms (cyclic_terms, or a copy of them in shared memory; z follows at terms + 2).
template <class T>
__device__ __forceinline__ T cyclic_correction(const T* terms, T y_first, T y_last) {
  return (y_first + terms[0] * y_last) * terms[1];
}
// This lane's rows of a solved cyclic line of n nodes (v: row lane C + q, node for node;
// the rows past n - 1 are padding) to out = stage + lane C, corrected: y_0 and y_{n-1}
// come back from the staging row (node i at stage[i]) once every lane has stored v
// there, and z, by warp rows and padded to 32 C values in the fused passes' factors
// (pass_factors), corrects the padding rows too without a bound. (Folding the plain store
// of the other lines into it, behind a flag, moved the x kernels' registers by up to 7 and
// the float periodic pass of 512 nodes with a source from 52 to 64 bytes of spills:
// ptxas.) The x pass of 512^3 (ncu, H200), float / double: 385 / 740 us this way (the
// float one with the ghost column, 335 without: kXGhostColumn), 379 / 779 with z read in
// lane chunks, 426 / 780 with the two values by a select over the lane's rows and two
// shuffles (float: 200 MB of spills at its 96 registers), 370 / 854 with c = g . d formed
// from the rhs beside the solve (g: 32 C more weights); with no correction here at all
// (each line's c stored, the y pass subtracting z_x(i) w(j, k), w = c solved along y) the
// float pass still ran 380 us with the ghost column: the correction is not what it waits
// on (docs/perf/periodic_fused_h200.txt).
// Every lane of the warp, converged.
template <class T, int C>
__device__ __forceinline__ void store_cyclic_rows(T* out, const T* stage, const T (&v)[C], const T* chunk_factors,
                                                  int n) {
#pragma unroll
  for (int q = 0; q < C; ++q) out[q] = v[q];
  __syncwarp();
  const T c = cyclic_correction(cyclic_terms<T, C>(chunk_factors), stage[0], stage[n - 1]);
  __syncwarp();  // every lane has read them
  const T* z = chunk_factors + kCyclicZByRows<C> + (threadIdx.x & 31);
#pragma unroll
  for (int q = 0; q < C; ++q) out[q] = fma(-c, z[32 * q], v[q]);
}

// The first and last unknown along an axis of the fused passes: 1 and n-2 between
// Dirichlet faces, 0 after a Neumann face, n-1 before one, 0 and n-1 on a periodic axis.
// (Args: PassArgs, or the variable passes' VarPassArgs and VarXArgs: n and unknown_faces,
// whose faces are Neumann faces only: the variable step takes no periodic axis.)
template <class Args>
__host__ __device__ __forceinline__ int first_unknown_of(const Args& a, int axis) {
  return (a.unknown_faces >> (2 * axis)) & 1 ? 0 : 1;
}
template <class Args>
__host__ __device__ __forceinline__ int last_unknown_of(const Args& a, int axis) {
  return a.n[axis] - ((a.unknown_faces >> (2 * axis + 1)) & 1 ? 1 : 2);
}

// Whether an axis of the fused passes is periodic (its lines cyclic).
template <class Args>
__host__ __device__ __forceinline__ bool periodic_axis_of(const Args& a, int axis) {
  return (a.unknown_faces >> (kPeriodicAxesBit + axis)) & 1;
}

// The same in a kernel built for faces whose nodes are unknowns (kUnknownFaces), else 1
// and n-2 outright.
template <bool kUnknownFaces, class Args>
__device__ __forceinline__ int first_of(const Args& a, int axis) {
  return kUnknownFaces ? first_unknown_of(a, axis) : 1;
}
template <bool kUnknownFaces, class Args>
__device__ __forceinline__ int last_of(const Args& a, int axis) {
  return kUnknownFaces ? last_unknown_of(a, axis) : a.n[axis] - 2;
}

// ---------------------------------------------------------------------------------------
// Pass x. Block 32 L threads; grid (ceil(lines / L), ceil(planes / kseg)) over the lines
// and planes of the unknowns (first_of, last_of: of y and z). Dynamic shared memory:
// x_pass_smem_bytes.
template <class T, int C>
__host__ __device__ constexpr int x_row_stride(int nx) {
  constexpr int V = 16 / sizeof(T);
  const int m = nx > 32 * C + 2 ? nx : 32 * C + 2;
  return (m + V - 1) / V * V;
}
template <class T, int L, int NS, int C>
std::size_t x_pass_smem_bytes(int nx) {
  return (static_cast<std::size_t>(NS) * (L + 2) * x_row_stride<T, C>(nx) + 3 * 32 * C) * sizeof(T);
}

// This lane's rows of an x line whose neighbour across the line's end is a ghost node
// (-1: none): lo_q is row 0 of lane 0 where the line starts at node 0, hi_q the row of
// node nx-1 where it ends there (outside 0..C-1 on the other lanes); across a Neumann
// face the ghost mirrors the neighbour inside. wrap (kernels built for periodic axes,
// kPeriodic): nx - 1 on a periodic x axis, else 0; node nx-1 is then node 0's left
// neighbour (wrap nodes along the row), and node 0 the right one of node nx-1: in the row
// of the plane slot after the line (kXGhostColumn), or hi_q - wrap nodes from the lane's
// first (the row's node 0, on every lane).
struct XEndRows {
  int lo_q, hi_q;
  int wrap;
};
constexpr XEndRows kNoXEnds{-1, -1, 0};
// Whether the x pass of a periodic x axis streams each line's node 0 again after its nx
// values (the ghost column: a second bulk copy of 16 bytes a row), so that node nx-1 finds
// its right neighbour in place; else the slot row's first padding value, 0 (rows zeroed
// once, copied nx values at a time), stands there and node 0 joins that row's sum (a
// broadcast load and a predicated add a row). x pass of 512^3 (ncu, H200), ghost column /
// node 0 added: float 385 / 336 us, double 740 / 763 (the double step of 256^3 0.299 /
// 0.346 ms).
template <class T>
constexpr bool kXGhostColumn = sizeof(T) == 8;
template <class T, int C, bool kPeriodic>
__device__ __forceinline__ XEndRows x_end_rows(const PassArgs<T>& a) {
  const int lane = threadIdx.x & 31;
  const int first = first_unknown_of(a, 0), last = last_unknown_of(a, 0);
  return {first == 0 && lane == 0 ? 0 : -1, last == a.n[0] - 1 ? last - first - lane * C : -1,
          kPeriodic && periodic_axis_of(a, 0) ? a.n[0] - 1 : 0};
}

// A u on this lane's C rows of an x line, constant weights: sc points at the line's row p C
// in plane k (row j), sn / ss at rows j-1 / j+1, sm / sp at planes k-1 / k+1 (same i).
// kUnknownFaces: the line's end rows (x_end_rows) take their ghosts' values; with
// kPeriodic, on a periodic x axis, from the other end.
template <class T, int C, bool kUnknownFaces = false, bool kPeriodic = false>
__device__ __forceinline__ void apply_operator_rows(T (&v)[C], const T* sc, const T* sn, const T* ss, const T* sm,
                                                    const T* sp, T wx, T wy, T wz, XEndRows ends = kNoXEnds) {
  if (kPeriodic && ends.wrap) {
    // The line's two ends are each other's neighbours: node 0's left one is read by lane 0
    // alone; node nx-1's right one by the ghost column or as node 0 added (kXGhostColumn).
    const T node0 = kXGhostColumn<T> ? T(0) : sc[ends.hi_q - ends.wrap];
#pragma unroll
    for (int q = 0; q < C; ++q) {
      const T uc = sc[q];
      T left = sc[q - 1];
      if (q == 0 && ends.lo_q == 0) left = sc[ends.wrap];
      T sum = wx * (left - uc) + wx * (sc[q + 1] - uc);
      if (!kXGhostColumn<T> && q == ends.hi_q) sum += wx * node0;
      sum += wy * (sn[q] - uc) + wy * (ss[q] - uc);
      sum += wz * (sm[q] - uc) + wz * (sp[q] - uc);
      v[q] = sum;
    }
    return;
  }
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T uc = sc[q];
    T sum;
    if (kUnknownFaces) {
      T left = sc[q - 1], right = sc[q + 1];
      left = q == ends.lo_q ? right : left;
      right = q == ends.hi_q ? left : right;
      sum = wx * (left - uc) + wx * (right - uc);
    } else {
      sum = wx * (sc[q - 1] - uc) + wx * (sc[q + 1] - uc);
    }
    sum += wy * (sn[q] - uc) + wy * (ss[q] - uc);
    sum += wz * (sm[q] - uc) + wz * (sp[q] - uc);
    v[q] = sum;
  }
}

// The scale of the rhs of line j (along x) in plane k of the fused step: 1/2 for each
// Neumann face the line lies on (y: j = 0 or ny-1, z: k = 0 or nz-1; the lines there are
// unknowns only behind a Neumann face, or, in the kernels built for them (kPeriodic), on
// a periodic axis, which takes no half), so that the y and z passes, whose rows at those
// faces are halved (pass_factors), take their rhs halved from the x solve (it is linear)
// and need not halve it themselves (which cost the float z pass of 512^3 16 registers).
template <bool kPeriodic, class Args>
__device__ __forceinline__ float ends_scale(const Args& a, int j, int k) {
  const bool y_end = (j == 0 || j == a.n[1] - 1) && !(kPeriodic && periodic_axis_of(a, 1));
  const bool z_end = (k == 0 || k == a.n[2] - 1) && !(kPeriodic && periodic_axis_of(a, 2));
  return (y_end ? 0.5f : 1.0f) * (z_end ? 0.5f : 1.0f);
}

// The Neumann end rows of the rhs halved, as their rows of the matrix are (pass_factors):
// the symmetric form the warp solve takes.
template <class T, int C>
__device__ __forceinline__ void halve_neumann_x_rows(T (&v)[C], XEndRows e) {
  if (e.wrap) return;  // a periodic x axis has no Neumann end
#pragma unroll
  for (int q = 0; q < C; ++q)
    if (q == e.lo_q || q == e.hi_q) v[q] *= T(0.5);
}

// rhs = dt (A u + f) on this lane's rows from v = A u: with a source, the line's f (from
// f + row) passes through its staging row (nx values, node i at stage[i]; only line warps
// load it: the unknowns first..last), whose interior the warp may overwrite; v[q] takes f
// of node lane_node + q. Every lane of the warp, converged.
template <class T, int C, bool kSource>
__device__ __forceinline__ void finish_rhs_rows(T (&v)[C], T* stage, const T* f, std::size_t row, int first, int last,
                                                bool line, T dt, int lane_node) {
  if (kSource) {
    const int lane = threadIdx.x & 31;
    if (line)
      for (int i = first + lane; i <= last; i += 32) stage[i] = f[row + i];
    __syncwarp();
    const T* mine = stage + lane_node;
#pragma unroll
    for (int q = 0; q < C; ++q) v[q] += mine[q];
  }
#pragma unroll
  for (int q = 0; q < C; ++q) v[q] *= dt;
}

template <class T, int L, int NS, int C, bool kSource, bool kUnknownFaces = false, bool kPeriodic = false>
__global__ void __launch_bounds__(32 * L) x_pass_kernel(PassArgs<T> a) {
  static_assert(kUnknownFaces || !kPeriodic, "a periodic axis's nodes are unknowns");
  static_assert(NS == 4, "three planes are read while the next one loads");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* slots = reinterpret_cast<T*>(smem_raw);
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int stride = x_row_stride<T, C>(nx);
  const int slot_elems = (L + 2) * stride;
  T* fac = slots + NS * slot_elems;
  const int j0 = first_of<kUnknownFaces>(a, 1) + blockIdx.x * L;
  const int kb = first_of<kUnknownFaces>(a, 2) + blockIdx.y * a.kseg;
  const int ke = min(kb + a.kseg, last_of<kUnknownFaces>(a, 2) + 1);  // planes kb..ke-1 are solved
  if (kb >= ke) return;
  const int tid = threadIdx.x;
  constexpr int kThreads = 32 * L;
  load_factors<T, C>(a.chunk_factors, fac);
  // Zero every slot once: the padding of the rows (and rows past the grid) is never
  // copied, and must read as finite.
  for (int e = tid; e < NS * slot_elems; e += kThreads) slots[e] = T(0);
  __syncthreads();

  // Plane k of u, lines j0-1..j0+L (up to the one past the last line: a ghost, as plane -1
  // or nz is, from the node it takes: ghost_node), into slot k % NS; on a periodic x axis
  // the lines' rows may take node 0 again after node nx-1 (kXGhostColumn).
  const int rows = min(L + 2, last_of<kUnknownFaces>(a, 1) + 2 - (j0 - 1));
  const bool periodic_y = kPeriodic && periodic_axis_of(a, 1), periodic_z = kPeriodic && periodic_axis_of(a, 2);
  const bool ghost_column = kPeriodic && kXGhostColumn<T> && periodic_axis_of(a, 0);
  auto issue_plane = [&](int k) {
    T* dst = slots + (k & (NS - 1)) * slot_elems;
    const T* plane = a.u_in + nxy * (kUnknownFaces ? ghost_node(k, nz, periodic_z) : k);
    for (int r = 0; r < rows; ++r, dst += stride) {
      const T* src =
          plane + static_cast<std::size_t>(kUnknownFaces ? ghost_node(j0 - 1 + r, ny, periodic_y) : j0 - 1 + r) * nx;
      if (a.vec16) {
        constexpr int V = 16 / sizeof(T);
        for (int e = tid; e < nx / V; e += kThreads) cp_async<16>(dst + e * V, src + e * V, true);
      } else {
        for (int e = tid; e < nx; e += kThreads) cp_async<sizeof(T)>(dst + e, src + e, true);
      }
      if (ghost_column && tid == 0 && r >= 1 && r <= L) cp_async<sizeof(T)>(dst + nx, src, true);
    }
  };
  issue_plane(kb - 1);
  issue_plane(kb);
  issue_plane(kb + 1);
  cp_async_commit();

  const int warp = tid / 32, lane = tid & 31;
  const int j = j0 + warp;
  const bool line = j <= last_of<kUnknownFaces>(a, 1);  // warps past the grid solve garbage and store nothing
  const int first0 = first_of<kUnknownFaces>(a, 0), last0 = last_of<kUnknownFaces>(a, 0);
  const XEndRows ends = kUnknownFaces ? x_end_rows<T, C, kPeriodic>(a) : kNoXEnds;
  // This lane's first row in a slot: row warp+1 of the slab, node i = first0 + lane C.
  const int lane_off = (warp + 1) * stride + first0 + lane * C;
  const T wx = a.w[0], wy = a.w[1], wz = a.w[2];
  for (int k = kb; k < ke; ++k) {
    cp_async_wait<0>();  // plane k+1 has landed (this thread's copies)
    __syncthreads();     // everyone's copies; everyone is done with plane k-2
    if (k + 2 <= ke) issue_plane(k + 2);
    cp_async_commit();
    const std::size_t row = nxy * k + static_cast<std::size_t>(j) * nx;
    if (kSource && line && k + 1 < ke) {
      for (int i = lane * (128 / sizeof(T)); i < nx; i += 32 * (128 / sizeof(T)))
        prefetch_l2(a.f + row + nxy + i);
    }
    const T* sc = slots + (k & 3) * slot_elems + lane_off;
    const T* sn = sc - stride;
    const T* ss = sc + stride;
    const T* sp = slots + ((k + 1) & 3) * slot_elems + lane_off;
    // Row j of plane k-1: read by this warp alone from here on, then its staging row.
    T* stage = slots + ((k + 3) & 3) * slot_elems + (warp + 1) * stride;
    const T* sm = stage + first0 + lane * C;
    T v[C];
    apply_operator_rows<T, C, kUnknownFaces, kPeriodic>(v, sc, sn, ss, sm, sp, wx, wy, wz, ends);
    __syncwarp();
    const T dt = kUnknownFaces ? a.dt * T(ends_scale<kPeriodic>(a, j, k)) : a.dt;
    finish_rhs_rows<T, C, kSource>(v, stage, a.f, row, first0, last0, line, dt, first0 + lane * C);
    if (kUnknownFaces) halve_neumann_x_rows<T, C>(v, ends);
    warp_solve<T, C>(v, fac, a.s);
    T* out = stage + first0 + lane * C;
    if (kPeriodic && ends.wrap) {
      store_cyclic_rows<T, C>(out, stage, v, a.chunk_factors, nx);
    } else {
#pragma unroll
      for (int q = 0; q < C; ++q) out[q] = v[q];
    }
    __syncwarp();
    if (line)
      for (int i = first0 + lane; i <= last0; i += 32) a.d[row + i] = stage[i];
  }
}

// ---------------------------------------------------------------------------------------
// Pass x with bulk copies (sm_90; rows of u and d 16-byte aligned). The rhs and the solve
// of x_pass_kernel, with the copies taken off the line warps: they spent a quarter of the
// kernel's instructions and half its stalls there (ncu, 512^3 float). One producer lane
// (warp L) streams the L+2 rows of each plane through a PlaneRing (plane_ring.cuh: a bulk
// copy per row, no block barrier per plane). A line warp stores its solved line from a
// staging row of its own by one bulk store, whole rows with zero increments at i = 0 and
// nx-1 (d is scratch; the later passes read interior nodes only). The solve's factors are
// held in registers. Block 32 (L + 1) threads; grid as x_pass_kernel; dynamic shared
// memory: x_pass_bulk_smem_bytes.
// kStagedSource: a second staging row per line warp and its barrier (x_pass_bulk_kernel).
// kSums: the solve's factors (3 x 32 C values) follow, 16-byte aligned, since the
// lanes' sums take the registers that hold them otherwise (x_pass_bulk_kernel).
template <class T, int L, int NS, int C, bool kStagedSource = false>
__host__ __device__ constexpr std::size_t x_pass_bulk_factors_offset(int nx) {
  constexpr int stage_rows = kStagedSource ? 2 * L : L;
  return ((static_cast<std::size_t>(NS) * (L + 2) + stage_rows) * x_row_stride<T, C>(nx) * sizeof(T) +
          (2 * NS + (kStagedSource ? L : 0)) * sizeof(unsigned long long) + 15) /
         16 * 16;
}
template <class T, int L, int NS, int C, bool kStagedSource = false, bool kSums = false>
std::size_t x_pass_bulk_smem_bytes(int nx) {
  constexpr int stage_rows = kStagedSource ? 2 * L : L;
  if (kSums) return x_pass_bulk_factors_offset<T, L, NS, C, kStagedSource>(nx) + 3 * 32 * C * sizeof(T);
  return (static_cast<std::size_t>(NS) * (L + 2) + stage_rows) * x_row_stride<T, C>(nx) * sizeof(T) +
         (2 * NS + (kStagedSource ? L : 0)) * sizeof(unsigned long long);
}
// Float lines of up to 546 nodes in blocks of up to 8 lines: two blocks per SM by shared
// memory; registers to match.
template <class T, int C, int L>
constexpr int x_bulk_min_blocks() {
  return sizeof(T) == 4 && C <= 17 && L <= 8 ? 2 : 1;
}

// The bulk x pass's shared memory (x_pass_bulk_smem_bytes at smem): NS plane slots of
// L+2 rows, then stage_rows staging rows (returned in stages), then the ring's 2 NS
// mbarriers and kExtraBars more of one arrival each (the caller's, from ring.full + 2 NS);
// first: the ring's first plane. Every thread of the block (32 (L + 1)), once: the rows'
// padding (and rows past the grid) is never copied and must read as finite, and a staging
// row's node 0 stays 0, so all of it is zeroed.
template <class T, int L, int NS, int kExtraBars = 0>
__device__ __forceinline__ PlaneRing<T, NS> x_bulk_setup(unsigned char* smem, int stride, int first, T*& stages,
                                                         int stage_rows = L) {
  T* slots = reinterpret_cast<T*>(smem);
  stages = slots + NS * (L + 2) * stride;
  auto* bars = reinterpret_cast<unsigned long long*>(stages + stage_rows * stride);
  const PlaneRing<T, NS> ring{slots, bars, bars + NS, L + 2, stride, first};
  for (int e = threadIdx.x; e < (NS * (L + 2) + stage_rows) * stride; e += 32 * (L + 1)) slots[e] = T(0);
  fence_proxy_async();  // the zeros before the bulk loads that overwrite them
  ring.init(L);
  if (kExtraBars > 0 && threadIdx.x < kExtraBars) {
    mbarrier_init(bars + 2 * NS + threadIdx.x, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  return ring;
}

// This lane's solve factors of the x lines, to registers.
template <class T, int C>
__device__ __forceinline__ void load_lane_factors(const T* factors, T (&al)[C], T (&gf)[C], T (&gb)[C]) {
  const T* f = factors + (threadIdx.x & 31) * C;
#pragma unroll
  for (int q = 0; q < C; ++q) {
    al[q] = f[q];
    gf[q] = f[32 * C + q];
    gb[q] = f[64 * C + q];
  }
}

// A line warp's source rows of the bulk x pass with kStagedSource: f of plane k in stage
// (its bulk load on bar, phase parity), and the row that takes plane k+1's.
template <class T>
struct StagedSource {
  T* next;
  unsigned long long* bar;
  unsigned parity;
};

// Plane k of line j by a line warp of the bulk x pass (planes up to ke-1 are solved): the
// rhs from the ring's planes k-1..k+1, then plane k-1 released, the solve on this lane's
// factors al, gf, gb, and the line out from the staging row by one bulk store of lane 0,
// in a bulk group of its own (none where !line). lane_off: this lane's first row in a slot.
// The source: loaded by the warp into the staging row (kSource; its next plane prefetched
// into L2), or there already (kStagedSource: lane 0 loads the next plane's into staged.next
// once the store from it has read it, a plane ahead). kUnknownFaces: a face is Neumann (or,
// with kPeriodic, an axis periodic); the line's unknowns are
// first_unknown_of..last_unknown_of (else 1..nx-2), maybe with a Neumann end, or all its
// nodes on a periodic x axis (a cyclic line: its correction follows the solve).
// on_solved(v) sees the lane's rows of the solved line before they are stored.
struct NoSolvedHook {
  template <class V>
  __device__ __forceinline__ void operator()(const V&) const {}
};
template <class T, int NS, int C, bool kSource, bool kStagedSource = false, bool kUnknownFaces = false,
          bool kPeriodic = false, class OnSolved = NoSolvedHook, class F>
__device__ __forceinline__ void x_bulk_line_plane(const PassArgs<T>& a, const PlaneRing<T, NS>& ring, int k, int ke,
                                                  int j, bool line, int lane_off, T* stage, const F& al, const F& gf,
                                                  const F& gb, StagedSource<T> staged = {},
                                                  const OnSolved& on_solved = {}) {
  static_assert(kSource || !kStagedSource, "a staged source is a source");
  const int lane = threadIdx.x & 31;
  const int nx = a.n[0];
  const int first0 = first_of<kUnknownFaces>(a, 0);
  const XEndRows ends = kUnknownFaces ? x_end_rows<T, C, kPeriodic>(a) : kNoXEnds;
  const T dt = kUnknownFaces ? a.dt * T(ends_scale<kPeriodic>(a, j, k)) : a.dt;
  const std::size_t nxy = static_cast<std::size_t>(nx) * a.n[1];
  const int stride = ring.stride;
  ring.wait(k + 1);
  const std::size_t row = nxy * k + static_cast<std::size_t>(j) * nx;
  if (kSource && !kStagedSource && line && k + 1 < ke) {
    for (int i = lane * (128 / sizeof(T)); i < nx; i += 32 * (128 / sizeof(T))) prefetch_l2(a.f + row + nxy + i);
  }
  const T* sc = ring.plane(k) + lane_off;
  T v[C];
  apply_operator_rows<T, C, kUnknownFaces, kPeriodic>(v, sc, sc - stride, sc + stride, ring.plane(k - 1) + lane_off,
                                                      ring.plane(k + 1) + lane_off, a.w[0], a.w[1], a.w[2], ends);
  // Plane k-1 is done with (this warp's last read of it); the staging row is free once
  // the last store has read it.
  ring.release(k - 1);
  T* out = stage + first0 + lane * C;
  if constexpr (kStagedSource) {
    if (line) {
      // This plane's f; then (its barrier's phase complete, so that the arrival opens the
      // next) the next plane's, once the last plane's store from its row has read it.
      mbarrier_wait(staged.bar, staged.parity);
      if (lane == 0 && k + 1 < ke) {
        const unsigned row_bytes = static_cast<unsigned>(nx * sizeof(T));
        bulk_wait_read();
        mbarrier_arrive_expect_tx(staged.bar, row_bytes);
        bulk_load(staged.next, a.f + row + nxy, row_bytes, staged.bar);
      }
    }
    // Each lane reads its own rows of f, which it overwrites with its solution below.
#pragma unroll
    for (int q = 0; q < C; ++q) v[q] = (v[q] + out[q]) * dt;
    if (lane == 0 && first0 == 1) stage[0] = T(0);  // d of a Dirichlet x face node stays 0
  } else {
    if (lane == 0) bulk_wait_read();
    __syncwarp();
    finish_rhs_rows<T, C, kSource>(v, stage, a.f, row, first0, last_of<kUnknownFaces>(a, 0), line, dt,
                                   first0 + lane * C);
  }
  if (kUnknownFaces) halve_neumann_x_rows<T, C>(v, ends);
  warp_solve<T, C>(v, al, gf, gb, a.s);
  on_solved(v);  // (kSums: no periodic axis)
  if (kPeriodic && ends.wrap) {
    store_cyclic_rows<T, C>(out, stage, v, a.chunk_factors, nx);
  } else {
#pragma unroll
    for (int q = 0; q < C; ++q) out[q] = v[q];
  }
  fence_proxy_async();
  __syncwarp();
  if (line && lane == 0) {
    bulk_store(a.d + row, stage, static_cast<unsigned>(nx * sizeof(T)));
    bulk_commit();
  }
}

// kStagedSource (with kSource): the line warps' f rows come by bulk loads into a second
// staging row each, a plane ahead, where the warps loaded them from L2 (after a prefetch)
// between the stencil and the solve, the loads' latency in every plane's chain. 512^3,
// H100, ncu (adi3d run heat_sine, f = 1 + x): a source took the x pass 0.377 -> 0.661 ms
// in float and 0.803 -> 1.419 in double, where its bytes alone are 0.18 and 0.36 ms; with
// the staged rows 0.579 and 1.201 (93% and 90% of the 3 arrays' floor at the copy).
// kUnknownFaces: a face is Neumann (or, with kPeriodic, an axis periodic): the lines,
// planes and nodes solved are the args' span (x_bulk_line_plane), and rows and planes of
// the slab past the grid are ghosts, streamed from the nodes they take
// (PlaneRing::produce_with_ghosts). kPeriodic: kernels of their own for grids with a
// periodic axis (which axes, at run time): the run-time tests of the wrapped ghosts, the
// ends' halving and the cyclic correction took the Neumann kernels' registers up by up to
// 30 and the float bulk pass of 512 nodes from 0 to 20 bytes of spills (ptxas).
// kSums: the x pass of a slab of a split z axis (SlabPassArgs): each lane keeps its rows'
// two weighted sums over the block's planes in registers and writes them once at the end.
template <class T, int L, int NS, int C, bool kSource, bool kStagedSource = false, bool kUnknownFaces = false,
          bool kSums = false, bool kPeriodic = false>
__global__ void __launch_bounds__(32 * (L + 1), x_bulk_min_blocks<T, C, L>())
    x_pass_bulk_kernel(std::conditional_t<kSums, SlabPassArgs<T>, PassArgs<T>> a) {
  static_assert(NS >= 4, "three planes are read while the next one loads");
  static_assert(kUnknownFaces || !kPeriodic, "a periodic axis's nodes are unknowns");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int stride = x_row_stride<T, C>(nx);
  const int j0 = first_of<kUnknownFaces>(a, 1) + blockIdx.x * L;
  const int kb = first_of<kUnknownFaces>(a, 2) + blockIdx.y * a.kseg;
  const int ke = min(kb + a.kseg, last_of<kUnknownFaces>(a, 2) + 1);  // planes kb..ke-1 are solved
  if (kb >= ke) return;
  T* stages;
  if constexpr (kSums)
    load_factors<T, C>(a.chunk_factors,
                       reinterpret_cast<T*>(smem_raw + x_pass_bulk_factors_offset<T, L, NS, C, kStagedSource>(nx)));
  // kStagedSource: two staging rows per line warp and a barrier each for its f rows.
  const PlaneRing<T, NS> ring =
      x_bulk_setup<T, L, NS, kStagedSource ? L : 0>(smem_raw, stride, kb - 1, stages, kStagedSource ? 2 * L : L);
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid & 31;
  const unsigned row_bytes = static_cast<unsigned>(nx * sizeof(T));
  if (warp == L) {
    constexpr bool kGhostColumns = kPeriodic && kXGhostColumn<T>;
    if (lane == 0) {
      if constexpr (kUnknownFaces)
        ring.template produce_with_ghosts<kGhostColumns>(
            a.u_in, nxy, nx, row_bytes, j0 - 1, min(L + 2, last_unknown_of(a, 1) + 2 - (j0 - 1)), ny, nz,
            kPeriodic && periodic_axis_of(a, 1), kPeriodic && periodic_axis_of(a, 2), ke,
            kGhostColumns && periodic_axis_of(a, 0) ? L : 0);
      else
        ring.produce(a.u_in + static_cast<std::size_t>(j0 - 1) * nx, nxy, nx, row_bytes, min(L + 2, ny - (j0 - 1)), ke);
    }
    return;
  }

  const int j = j0 + warp;
  const bool line = j <= last_of<kUnknownFaces>(a, 1);  // warps past the grid solve garbage and store nothing
  // The lane's factors in registers, or with kSums in shared memory (loaded before the
  // ring's setup barrier), this lane's C values at fac_lane, fac_lane + 32 C, + 64 C.
  constexpr int RC = kSums ? 1 : C;
  T al[RC], gf[RC], gb[RC];
  const T* const fac_lane = reinterpret_cast<const T*>(
                                smem_raw + x_pass_bulk_factors_offset<T, L, NS, C, kStagedSource>(nx)) +
                            lane * C;
  if constexpr (!kSums) load_lane_factors<T, C>(a.chunk_factors, al, gf, gb);
  // Row warp+1 of a slot, node first + lane C.
  const int lane_off = (warp + 1) * stride + first_of<kUnknownFaces>(a, 0) + lane * C;
  T* stage = stages + warp * stride;
  T* const stage_b = stages + (L + warp) * stride;  // kStagedSource
  unsigned long long* const fbar = ring.full + 2 * NS + warp;
  if (kStagedSource && line && lane == 0) {  // the first plane's f
    mbarrier_arrive_expect_tx(fbar, row_bytes);
    bulk_load(stage, a.f + nxy * kb + static_cast<std::size_t>(j) * nx, row_bytes, fbar);
  }
  ring.wait(kb - 1);
  ring.wait(kb);
  constexpr int SC = kSums ? C : 1;
  T sum_first[SC], sum_last[SC];
#pragma unroll
  for (int q = 0; q < SC; ++q) sum_first[q] = sum_last[q] = T(0);
  for (int k = kb; k < ke; ++k) {
    T w_first = T(0), w_last = T(0);
    if constexpr (kSums) {
      w_first = a.weights[k];
      w_last = a.weights[nz + k];
    }
    const auto add_to_sums = [&](const T(&v)[C]) {
      if constexpr (kSums) {
#pragma unroll
        for (int q = 0; q < C; ++q) {
          sum_first[q] = fma(w_first, v[q], sum_first[q]);
          sum_last[q] = fma(w_last, v[q], sum_last[q]);
        }
      }
    };
    const auto plane = [&](const auto& fa, const auto& fg, const auto& fb) {
      if constexpr (kStagedSource) {
        const bool even = ((k - kb) & 1) == 0;
        x_bulk_line_plane<T, NS, C, kSource, true, kUnknownFaces, kPeriodic>(
            a, ring, k, ke, j, line, lane_off, even ? stage : stage_b, fa, fg, fb,
            {even ? stage_b : stage, fbar, static_cast<unsigned>(k - kb) & 1u}, add_to_sums);
      } else {
        x_bulk_line_plane<T, NS, C, kSource, false, kUnknownFaces, kPeriodic>(a, ring, k, ke, j, line, lane_off, stage,
                                                                              fa, fg, fb, {}, add_to_sums);
      }
    };
    if constexpr (kSums)
      plane(fac_lane, fac_lane + 32 * C, fac_lane + 64 * C);
    else
      plane(al, gf, gb);
  }
  if constexpr (kSums) {
    // This lane's nodes first + lane C + q of line j (padding rows past the last are not).
    const int node0 = first_of<kUnknownFaces>(a, 0) + lane * C, last = last_of<kUnknownFaces>(a, 0);
    T* out = a.sums + 2 * nxy * blockIdx.y + static_cast<std::size_t>(j) * nx + node0;
    if (line)
#pragma unroll
      for (int q = 0; q < C; ++q)
        if (node0 + q <= last) {
          out[q] = sum_first[q];
          out[nxy + q] = sum_last[q];
        }
  }
  if (lane == 0) bulk_wait();
}

// A plain solve's end rows: the first unknown's row lo and the last's hi (null where the
// calling thread holds neither; one row when the line has one unknown). Behind a Dirichlet
// end the equation carries the end node's value (s d, s = -a = -c); a Neumann end row is
// halved, first: a line of one unknown between a Dirichlet and a Neumann end has both on
// one row, whose coupling to the end node is halved to -s.
template <class T>
__device__ __forceinline__ void prepare_end_rows(T* lo, T* hi, bool dirichlet_lo, bool dirichlet_hi, T s,
                                                 T end_lo, T end_hi) {
  if (lo && !dirichlet_lo) *lo *= T(0.5);
  if (hi && !dirichlet_hi) *hi *= T(0.5);
  if (lo && dirichlet_lo) *lo += s * end_lo;
  if (hi && dirichlet_hi) *hi += s * end_hi;
}

// A warp solves K neighbouring lines of a y or z tile in place: c is line 0's row lane C
// (rows P values apart, line k at c + k), lim the rows of this lane's chunk that are real
// (q < lim are stored back).
template <class T, int K, int C, int P>
__device__ __forceinline__ void solve_tile_lines(T* c, const T* fac, T s, int lim) {
  T v[K][C];
#pragma unroll
  for (int q = 0; q < C; ++q)
#pragma unroll
    for (int k = 0; k < K; ++k) v[k][q] = c[q * P + k];
  const T* al = fac + (threadIdx.x & 31) * C;
  warp_solve_lines<T, K, C>(v, al, al + 32 * C, al + 64 * C, s);
#pragma unroll
  for (int q = 0; q < C; ++q)
    if (q < lim)
#pragma unroll
      for (int k = 0; k < K; ++k) c[q * P + k] = v[k][q];
}
template <class T, int C, int P>
__device__ __forceinline__ void solve_tile_line(T* c, const T* fac, T s, int lim) {
  solve_tile_lines<T, 1, C, P>(c, fac, s, lim);
}

// This thread's column of a tile out to dst: the unknown rows row0, row0 + RS, ... < R, x
// in a tile of pitch P, dst sweep = RS rows apart; row r gets combine(in, x_r), in loaded by
// load(q) (q: the row's index in this thread's column), B loads in flight per thread (their
// latency, once per batch, is the cost: loaded one at a time, each store waits for its
// load, since as far as the compiler knows the stores may alias what is loaded).
template <int B, int RS, int P, class T, class Load, class Combine>
__device__ __forceinline__ void store_column(T* dst, const T* x, int row0, int R, std::size_t sweep, Load load,
                                             Combine combine) {
  for (int r = row0, q0 = 0; r < R; r += B * RS, q0 += B, dst += B * sweep, x += B * RS * P) {
    T in[B];
#pragma unroll
    for (int q = 0; q < B; ++q)
      if (r + q * RS < R) in[q] = load(q0 + q);
#pragma unroll
    for (int q = 0; q < B; ++q)
      if (r + q * RS < R) dst[q * sweep] = combine(in[q], x[q * RS * P]);
  }
}
// The z passes' update of u: u += x on this thread's column (store_column), B loads of u
// in flight per thread.
template <int B, int RS, int P, class T>
__device__ __forceinline__ void add_column_to_u(T* up, const T* x, int row0, int R, std::size_t sweep) {
  store_column<B, RS, P>(
      up, x, row0, R, sweep, [&](int q) { return up[q * sweep]; }, [](T u, T d) { return u + d; });
}

// The lines of a y or z pass (kAxis): the nodes solved along each line (first, R of
// them), the columns i_first..i_last and the planes o_first.. (planes of them) across.
// The fused passes take the unknowns of every axis (the interior, 1 to n-2, between
// Dirichlet faces; fused_tile_span for the constant-alpha passes, which may have Neumann
// faces); a plain solve (kSolveOnly: SolveArgs or VarSolveArgs) takes its args' first
// and last.
struct TileSpan {
  int first, R, i_first, i_last, o_first, planes;
};
template <int kAxis, bool kSolveOnly, class Args>
__device__ __forceinline__ TileSpan tile_span(const Args& a) {
  constexpr int kOther = kAxis == 1 ? 2 : 1;  // the axis that numbers the tiles' planes
  if constexpr (kSolveOnly)
    return {a.first[kAxis], a.last[kAxis] - a.first[kAxis] + 1, a.first[0], a.last[0], a.first[kOther],
            a.last[kOther] - a.first[kOther] + 1};
  else
    return {1, a.n[kAxis] - 2, 1, a.n[0] - 2, 1, a.n[kOther] - 2};
}
template <int kAxis, class Args>
__device__ __forceinline__ TileSpan fused_tile_span(const Args& a) {
  constexpr int kOther = kAxis == 1 ? 2 : 1;
  const int first = first_unknown_of(a, kAxis), o_first = first_unknown_of(a, kOther);
  return {first, last_unknown_of(a, kAxis) - first + 1, first_unknown_of(a, 0), last_unknown_of(a, 0), o_first,
          last_unknown_of(a, kOther) - o_first + 1};
}

// ---------------------------------------------------------------------------------------
// Passes y (kAxis 1) and z (kAxis 2). Block kThreads threads (8 or 16 warps; a warp
// solves L / warps lines of a tile, K at a time), persistent over the tiles
// (ceil(nx / L) per line of tiles, times the planes of unknowns of the other axis), over
// the unknowns of each axis (fused_tile_span where a face is Neumann or an axis periodic:
// kUnknownFaces); a Neumann end row is halved, as its factors are (the matrix is then
// symmetric with off-diagonal -s; the fused passes' rhs comes halved there). NB = 1: one
// tile at a time (the other blocks on the SM overlap); NB = 2: the next tile's copy is in flight while the
// block solves and stores the current one (one block per SM by shared memory; lines of
// up to 32 x 17 rows). The z pass loads u in its update loop, B loads in flight per
// thread. kSolveOnly: a plain line solve of d in place along either axis (WarpLineSolve):
// a Dirichlet end value of d (not necessarily 0 there) moves into the first or last row;
// kCyclic: the lines of a periodic axis, cyclic (cyclic_correction), which have no end rows
// and take their correction as they are stored, of a plain solve or of a fused pass (with
// kUnknownFaces: the other axes' spans by the mask); kernels of their own: a run-time test
// took the plain solve's float x lines' kernel of 512 nodes from 68 registers to 64 and 4
// bytes of spills, and the fused passes' kernels of Neumann faces up by 8-26 registers,
// into spills in some.
// Dynamic shared memory: yz_pass_smem_bytes.
//
// 512^3 on an H100 (adi3d_fused_tune, 2026-11-23), one buffer / two: y 0.438 / 0.418 ms
// float, 0.802 / 0.788 double; z 0.631 / 0.645 float, 1.235 / 1.232 double (the z pass
// with two buffers loading its u into registers before the solve, since removed; one
// buffer and u by cp.async into a tile of its own, also removed: 0.702 / 1.249; one
// buffer with the tile's u prefetched into L2 as its copy is issued: 0.668 / 1.32 against
// 0.626 / 1.24, not kept). Only the float y pass gained enough to take two, until the
// warps solved two lines at once (K = 2) and the z pass kept 16 loads of u in flight (B):
// then the float z pass too (kTwoTileShape). Lines per tile and warps per
// block of the fused passes: kTileLines and kTileThreads (fused_step.cu).
//
// A tile has R_alloc >= R rows of L+1 values; the chunk-wise reads of the padding rows
// (up to 32 C) run past it into what follows (the factors: finite and not written during
// the solve), and the rows R..R_alloc-1 are zeroed once. With NB = 2 the first tile has
// all 32 C rows (what follows it, the second tile, is being written).
// Cyclic lines (kCyclic): their correction's terms (cyclic_terms: 2 values and z, at most
// 32 C of them) in shared memory after the factors.
template <int C>
__host__ __device__ constexpr int yz_cyclic_terms() {
  return 32 * C + 2;
}
template <class T, int L, int C>
__host__ __device__ constexpr int yz_alloc_rows(int R) {
  const int m = 32 * C - (3 * 32 * C) / (L + 1);
  return R > m ? R : m;
}
template <class T, int L, int C, int NB = 1>
std::size_t yz_pass_smem_bytes(int n, bool cyclic = false) {
  const std::size_t tile = static_cast<std::size_t>(yz_alloc_rows<T, L, C>(n - 2)) * (L + 1);
  const std::size_t first_tile = NB == 2 ? static_cast<std::size_t>(32 * C) * (L + 1) : 0;
  return (first_tile + tile + 3 * 32 * C + (cyclic ? yz_cyclic_terms<C>() : 0)) * sizeof(T);
}
// Chunk capacities whose lines may take two tile buffers: 2 x 32 x 33 rows of 128 bytes
// exceed an SM's shared memory (the kernels of the others are not compiled); double
// lines of 771-802 nodes (C = 25) keep one (the launches check the fit).
template <int C>
constexpr bool yz_two_tiles_possible() {
  return C <= 25;
}

// The tile shape of float y and z lines of 290-802 nodes (C = 17, 21, 25) and double lines
// of 547-802 (C = 21, 25) where two buffers fit: blocks of kTwoTileThreads threads, warps
// solving kTwoTileLinesAtOnce lines at once (fused_step.cu has the measurements; the plain
// solves take it where it gains: line_solve_warp.cu).
template <class T, int C>
constexpr bool kTwoTileShape = (sizeof(T) == 4 ? C >= 17 : C >= 21) && C <= 25;
template <class T>
constexpr int kTwoTileThreads = sizeof(T) == 4 ? 512 : 256;
constexpr int kTwoTileLinesAtOnce = 2;

// Blocks per SM the register budget is cut for (the tiles of n = 512 allow 3 in float with
// one tile buffer, 1 with two).
template <class T, int C, int NB>
constexpr int yz_min_blocks() {
  return NB == 2 ? 1 : C <= 9 || (C <= 17 && sizeof(T) == 4) ? 3 : C <= 17 ? 2 : 1;
}

template <class T, int L, int C, int kAxis, bool kSolveOnly = false, int NB = 1, int kThreads = 256, int K = 1,
          int B = 8, bool kUnknownFaces = false, bool kCyclic = false>
__global__ void __launch_bounds__(kThreads, (kThreads == 256 ? yz_min_blocks<T, C, NB>() : 1))
    yz_pass_kernel(std::conditional_t<kSolveOnly, SolveArgs<T>, PassArgs<T>> a) {
  static_assert(!kCyclic || kSolveOnly || kUnknownFaces, "a periodic axis's nodes are unknowns");
  constexpr int kWarps = kThreads / 32;
  constexpr int LPW = L / kWarps;   // lines per warp, K at a time
  static_assert(LPW % K == 0, "a warp's lines, K at a time");
  constexpr int RS = kThreads / L;  // rows per sweep of the block
  constexpr int P = L + 1;          // row pitch in shared memory
  static_assert(L % kWarps == 0 && (L & (L - 1)) == 0, "L: a power of two, a multiple of the warps");
  static_assert(NB == 1 || (NB == 2 && yz_two_tiles_possible<C>()), "one or two tile buffers");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int nx = a.n[0], ny = a.n[1];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  // The fused passes' span is the interior, 1..n-2 outright, unless a face is Neumann
  // (kUnknownFaces): the 512^3 float y pass ran 408 -> 412 us with the span from the mask (ncu).
  TileSpan span;
  if constexpr (kSolveOnly || !kUnknownFaces)
    span = tile_span<kAxis, kSolveOnly>(a);
  else
    span = fused_tile_span<kAxis>(a);
  const int first = span.first, R = span.R, i_first = span.i_first, i_last = span.i_last, o_first = span.o_first,
            planes = span.planes;
  const int tile_elems = yz_alloc_rows<T, L, C>(R) * P;
  T* const tile0 = reinterpret_cast<T*>(smem_raw);
  T* const tile1 = tile0 + (NB == 2 ? 32 * C * P : 0);
  T* fac = tile1 + tile_elems;
  T* const terms = fac + 3 * 32 * C;  // kCyclic
  const int tiles_i = (nx + L - 1) / L;
  const int total = tiles_i * planes;
  const int tid = threadIdx.x;
  load_factors<T, C>(a.chunk_factors, fac);
  if constexpr (kCyclic) {
    const T* from = cyclic_terms<T, C>(a.chunk_factors);
    for (int e = tid; e < R + 2; e += kThreads) terms[e] = from[e];  // R = n: every node
  }
  for (int e = R * P + tid; e < tile_elems; e += kThreads) tile1[e] = T(0);
  if (NB == 2)
    for (int e = R * P + tid; e < 32 * C * P; e += kThreads) tile0[e] = T(0);

  // Copies and stores: thread tid always takes column col = tid % L, rows row0 + s RS (so
  // a thread's stores read from a tile exactly what its copies wrote there).
  const int col = tid % L, row0 = tid / L;
  const std::size_t row_stride = kAxis == 1 ? static_cast<std::size_t>(nx) : nxy;
  const std::size_t sweep = RS * row_stride;
  // Offset of (row row0, column col) of tile t; ok: that column is an unknown line.
  auto offset = [&](int t, bool& ok) -> std::size_t {
    const int i = (t % tiles_i) * L + col;
    const std::size_t o = o_first + t / tiles_i;
    ok = i >= i_first && i <= i_last;
    return i + (kAxis == 1 ? nxy * o : nx * o) + (first + row0) * row_stride;
  };
  auto copy_rows = [&](const T* base, T* dst, std::size_t p0, bool ok) {
    const T* src = base + p0;
    dst += row0 * P + col;
    for (int r = row0; r < R; r += RS, src += sweep, dst += RS * P)
      cp_async<sizeof(T)>(dst, ok ? src : base, ok);
  };
  // Plain solve: the values of d on the Dirichlet end nodes beside this thread's rows of
  // tile t (row 0 and row R-1 of its column, where it copies them), loaded with the tile's
  // copy and used once it has landed, so that their latency hides behind it.
  const bool lo_row = row0 == 0, hi_row = row0 == (R - 1) % RS;
  const bool dirichlet_lo = first == 1, dirichlet_hi = first + R == a.n[kAxis] - 1;
  T next_lo = T(0), next_hi = T(0);
  auto load_ends = [&](std::size_t p0, bool ok) {
    if (!kSolveOnly || !ok) return;
    if (lo_row && dirichlet_lo) next_lo = a.d[p0 - row_stride];
    if (hi_row && dirichlet_hi) next_hi = a.d[p0 + (R - row0) * row_stride];
  };
  auto copy_tile = [&](int t, T* dst) {
    bool ok;
    const std::size_t p0 = offset(t, ok);
    copy_rows(a.d, dst, p0, ok);
    load_ends(p0, ok);
  };

  const int warp = tid / 32, lane = tid & 31;
  const int lim = R - lane * C;  // rows of this lane's chunk that are real: q < lim
  if (NB == 2) {
    if (static_cast<int>(blockIdx.x) < total) copy_tile(blockIdx.x, tile0);
    cp_async_commit();
  }
  int buffer = 0;
  for (int t = blockIdx.x; t < total; t += gridDim.x, buffer ^= NB - 1) {
    T* const tile = buffer ? tile1 : tile0;
    bool ok;
    const std::size_t p0 = offset(t, ok);
    T end_lo, end_hi;  // tile t's Dirichlet end values (plain solve)
    if constexpr (NB == 1) {
      __syncthreads();  // the last tile's stores are done
      copy_tile(t, tile);
      cp_async_commit();
      end_lo = next_lo;
      end_hi = next_hi;
      cp_async_wait<0>();
    } else {
      end_lo = next_lo;
      end_hi = next_hi;
      // The other tile's last reads by other threads were in the last solve (a barrier
      // ago); this thread's own stores from it are issued.
      if (t + static_cast<int>(gridDim.x) < total) copy_tile(t + gridDim.x, buffer ? tile0 : tile1);
      cp_async_commit();
      cp_async_wait<1>();  // tile t
    }
    // Row 0 and row R-1 of the column were copied by this thread, if by any. (The fused
    // passes' rows at a Neumann face come halved from the x pass: ends_scale.)
    if (kSolveOnly && !kCyclic && ok)
      prepare_end_rows(lo_row ? tile + col : nullptr, hi_row ? tile + (R - 1) * P + col : nullptr, dirichlet_lo,
                       dirichlet_hi, a.s, end_lo, end_hi);
    __syncthreads();
#pragma unroll 1
    for (int s = 0; s < LPW; s += K)  // K lines at a time: registers
      solve_tile_lines<T, K, C, P>(tile + lane * C * P + warp * LPW + s, fac, a.s, lim);
    __syncthreads();
    if (!ok) continue;
    const T* x = tile + row0 * P + col;
    // Cyclic lines take their correction as they are stored: the column's first and last
    // rows are the line's nodes 0 and n-1. z from shared memory: the float y and z passes
    // of 512^3 ran 335 and 480 us against 327 and 466 between Dirichlet faces, and 348 and
    // 493 with z from the factors in global memory (L1), 8 rows' loads at a time (ncu, H200).
    T c = T(0);
    const T* z = terms + 2 + row0;
    if constexpr (kCyclic) c = cyclic_correction(terms, tile[col], tile[(R - 1) * P + col]);
    if (kAxis == 1 || kSolveOnly) {
      T* dst = a.d + p0;
      if constexpr (kCyclic) {
#pragma unroll 4
        for (int r = row0; r < R; r += RS, dst += sweep, x += RS * P, z += RS) *dst = fma(-c, *z, *x);
      } else {
        for (int r = row0; r < R; r += RS, dst += sweep, x += RS * P) *dst = *x;
      }
    } else if constexpr (kCyclic) {
      T* up = a.u + p0;
      store_column<B, RS, P>(
          up, x, row0, R, sweep, [&](int q) { return fma(-c, z[q * RS], up[q * sweep]); },
          [](T u, T y) { return u + y; });
    } else {
      // z 512^3 float, one buffer, on an H200: B = 4, 8, 16, 32 ran 0.549, 0.505, 0.507,
      // 0.524 ms (H100: B = 16 0.630 against 0.628; with two buffers 0.596 against 0.634).
      add_column_to_u<B, RS, P>(a.u + p0, x, row0, R, sweep);
    }
  }
  cp_async_wait<0>();
}

}  // namespace adi3d::cuda::fused
