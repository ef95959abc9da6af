#pragma once
// Kernels of the fused Douglas step for a node diffusivity field (fused_step_var.cu):
// the y and z passes of fused_step_kernels.cuh, with the coefficients of every row made
// on the fly from alpha (harmonic face means, discretization.hpp). Internal to the CUDA
// backend.
//
// Line solve (warp_solve_var): the lines no longer share factors, so each warp runs a
// partition solve of its line. Lane p owns the rows [p C, p C + C); its last row is a
// separator S_p, the C-1 rows before it are "inner" rows bounded by S_{p-1} and S_p.
//  1. Forward elimination over the inner rows, S_{p-1} carried as an unknown:
//     x_q = y_q + g_q S_{p-1} - c_q x_{q+1}, the one reciprocal of each row here.
//  2. Back substitution from x_M = S_p, without divisions: every inner row as
//     x_q = y_q + g_q S_{p-1} + h_q S_p (y, g in place; h_q = -c_q h_{q+1}).
//  3. The separator rows, with the last inner row of this lane and the first of the next
//     substituted, form a tridiagonal system in S_0..S_31, one row per lane (the Schur
//     complement of a diagonally dominant matrix: dominant, so no pivoting), solved by
//     parallel cyclic reduction in 5 shuffle steps.
//  4. The inner rows from step 2's forms, independent of each other.
// The dependent chain is 2 C + 5 steps, C of them through a reciprocal. (It replaced
// two interleaved eliminations from the chunk's two ends, each with a reciprocal a row,
// and a forward and a backward sweep in step 4: 3 C + 5 steps, 2 C reciprocals.) Rows
// past the line (padding) are identity rows with zero data: they solve to 0 and couple
// to nothing.
#include "solvers/cuda/common/fast_divide.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/discretization.hpp"
#include "solvers/material_index.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace adi3d::cuda::fused {

// v[q]: data of row p C + q (p: lane), the solution on return; kZeroPadding: the rows
// q >= lim are set to 0 first (else the caller loaded zeros there). face(q), q = 0..C: tau
// times the weight of the face between rows q-1 and q of this lane's chunk (rows -1 and C
// are the neighbouring chunks' or the line's Dirichlet nodes). mass(q): the identity term
// of row q's diagonal (1; 1/2 on a halved Neumann end row). lim: rows q < lim of this
// lane are unknowns of the line. Every lane of the warp must call it, converged.
template <class T, int C, bool kZeroPadding = true, class Face, class Mass>
__device__ __forceinline__ void warp_solve_var(T (&v)[C], Face face, Mass mass, int lim) {
  static_assert(C >= 3, "a chunk needs inner rows and a separator");
  constexpr int M = C - 1;  // inner rows
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  T w[C + 1];
#pragma unroll
  for (int q = 0; q <= C; ++q) w[q] = face(q);
  // Row q: a x_{q-1} + b x_q + c x_{q+1} = v_q. The coupling to a Dirichlet node (x = 0)
  // and every coefficient of a padding row are dropped: the selects also keep what the
  // padding's faces hold (anything) out of the solve.
  auto lo = [&](int q) { return q < lim && (lane | q) != 0 ? -w[q] : T(0); };
  auto up = [&](int q) { return q + 1 < lim ? -w[q + 1] : T(0); };
  auto dg = [&](int q) { return q < lim ? mass(q) + w[q] + w[q + 1] : T(1); };
  if constexpr (kZeroPadding)
#pragma unroll
    for (int q = 0; q < C; ++q)
      if (q >= lim) v[q] = T(0);

  // 1. Forward elimination.
  T y[M], g[M], c[M];
  {
    T yq = T(0), gq = T(1), cq = T(0);
#pragma unroll
    for (int q = 0; q < M; ++q) {
      const T a = lo(q);
      const T r = reciprocal(dg(q) - a * cq);
      yq = (v[q] - a * yq) * r;
      gq = -a * gq * r;
      cq = up(q) * r;
      y[q] = yq;
      g[q] = gq;
      c[q] = cq;
    }
  }
  // 2. Back substitution: c becomes h.
  c[M - 1] = -c[M - 1];
#pragma unroll
  for (int q = M - 2; q >= 0; --q) {
    y[q] -= c[q] * y[q + 1];
    g[q] -= c[q] * g[q + 1];
    c[q] = -c[q] * c[q + 1];
  }
  // 3. Separator row of this lane, its last inner row (here) and the next lane's first
  //    substituted: A S_{p-1} + B S_p + Cc S_{p+1} = D.
  const T yn = __shfl_down_sync(kAll, y[0], 1);
  const T gn = __shfl_down_sync(kAll, g[0], 1);
  const T hn = __shfl_down_sync(kAll, c[0], 1);
  const T as = lo(M), cs = up(M);  // cs = 0 on lane 31: its separator is the line's end or padding
  T A = as * g[M - 1];
  T B = dg(M) + as * c[M - 1] + cs * gn;
  T Cc = cs * hn;
  T D = v[M] - as * y[M - 1] - cs * yn;
  {
    const T r = reciprocal(B);
    A *= r;
    Cc *= r;
    D *= r;
  }
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T Am = __shfl_up_sync(kAll, A, d), Cm = __shfl_up_sync(kAll, Cc, d), Dm = __shfl_up_sync(kAll, D, d);
    T Ap = __shfl_down_sync(kAll, A, d), Cp = __shfl_down_sync(kAll, Cc, d), Dp = __shfl_down_sync(kAll, D, d);
    if (lane < d) Am = Cm = Dm = T(0);        // rows before the line: none
    if (lane + d >= 32) Ap = Cp = Dp = T(0);  // rows after it
    const T r = reciprocal(T(1) - A * Cm - Cc * Ap);
    D = (D - A * Dm - Cc * Dp) * r;
    A = -A * Am * r;
    Cc = -Cc * Cp * r;
  }
  const T S = D;
  T Sm = __shfl_up_sync(kAll, S, 1);
  if (lane == 0) Sm = T(0);
  // 4. Inner rows.
#pragma unroll
  for (int q = 0; q < M; ++q) v[q] = y[q] + g[q] * Sm + c[q] * S;
  v[M] = S;
}

// f(std::integral_constant<int, I>{}) for each I, in order.
template <class F, int... I>
__device__ __forceinline__ void for_each_index(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}

// tau times the weight of the face between two nodes of diffusivities a0, a1.
template <class T>
__device__ __forceinline__ T face_weight(T a0, T a1, T tau_inv_h2) {
  return tau_inv_h2 * harmonic_mean_fast(a0, a1);
}

// The ends of a plain line solve (the unknowns first..first + R - 1 of a line of n nodes:
// a Neumann end's row halved, its outer face weightless and its identity term 1/2; a
// Dirichlet end node's value moved into the row beside it), as the lane whose chunk of C
// rows starts at node lane_node (lim of them unknowns of the line) sees them. Shared by
// the y/z tiles (yz_var_kernel) and the x lines (x_line_var_kernel) of an alpha field.
template <class T, int C>
struct PlainLineEnds {
  int lane, lane_node, lim, n;
  bool halve_lo, halve_hi;  // Neumann ends

  __device__ __forceinline__ PlainLineEnds(int lane_, int first, int R, int n_)
      : lane(lane_),
        lane_node(first + lane_ * C),
        lim(R - lane_ * C),
        n(n_),
        halve_lo(first == 0),
        halve_hi(first + R == n_) {}
  // Face q of the chunk, between nodes lane_node + q - 1 and lane_node + q, of weight w if
  // both are nodes of the line (only face 0 of a lane can lie before it; faces q > 0 past
  // it are the end's or padding).
  __device__ __forceinline__ T face(int q, T w) const {
    const int m = lane_node + q;
    return (q == 0 ? m >= 1 : m <= n - 1) ? w : T(0);
  }
  // The face past the lane's last unknown where the line ends in its chunk.
  __device__ __forceinline__ int q_end() const { return max(0, min(lim, C)); }
  // The identity term of row q (C rows, compile-time q), with a Robin end's share of the
  // halved end row's diagonal (robin_lo, robin_hi: RobinEnds::term, 0 at other ends).
  __device__ __forceinline__ T mass(int q, T robin_lo, T robin_hi) const {
    const bool lo_row = q == 0 && halve_lo && lane == 0;
    const bool hi_row = q == lim - 1 && halve_hi;
    return (lo_row || hi_row ? T(0.5) : T(1)) + (lo_row ? robin_lo : T(0)) + (hi_row ? robin_hi : T(0));
  }
  // The end rows of the lane's chunk in place (c: its first row, rows `stride` apart, the
  // Dirichlet nodes beside the line at c[-stride] and c[lim stride]), before the solve
  // loads them, given the faces before the chunk and past its last unknown (a branch on
  // q == lim - 1 over the solve's rows made them an indexed array, in local memory, and
  // per-row masks cost a tenth of its instructions). A Neumann end row is halved before
  // the Dirichlet node's value enters, so that one unknown between a Dirichlet and a
  // Neumann end takes both (the low end's value added last).
  __device__ __forceinline__ void end_rows(T* c, int stride, T face_first, T face_past) const {
    if (lane == 0 && halve_lo) c[0] *= T(0.5);
    if (lim >= 1 && lim <= C) {
      T& last = c[(lim - 1) * stride];
      last = halve_hi ? last * T(0.5) : last + face_past * c[lim * stride];
    }
    if (lane == 0 && !halve_lo) c[0] += face_first * c[-stride];
  }
};

// Robin faces' share of a halved end row's diagonal: tau h / h_grid, half of the implicit
// rows' tau beta (beta = 2 h / h_grid, discretization.hpp), from the face's constant h or
// its face array (a line's entry: face_entry_of its nodes); 0 on faces that are not Robin.
// Faces by compile-time index: a run-time index into a kernel's parameters puts them in
// local memory.
template <class T>
struct RobinEnds {
  T h[6];               // the constant h (0: not Robin, or a field)
  const T* h_field[6];  // h over the face, or null
  T inv_h[3];
  template <int kFace>
  __device__ __forceinline__ T term(T tau, std::size_t entry) const {
    return tau * inv_h[kFace / 2] * (h_field[kFace] ? h_field[kFace][entry] : h[kFace]);
  }
};

template <class T>
struct VarPassArgs {
  int n[3];
  T inv_h2[3];
  T tau;
  const T* alpha;  // node diffusivity
  T* d;            // stage array: rhs solved along x on entry
  T* u;            // u, updated in place (z pass)
  // alpha by material (OperatorView::material), for the kernels built with kMaterial.
  const std::uint8_t* material;
  const T* material_face_mean;
  int material_pitch;
  // The Neumann faces (bit face_index), for the kernels built with kNeumann: their nodes
  // are unknowns too (first_unknown_of), and the rhs comes halved at them from the x pass
  // (ends_scale); those that are Robin faces add their terms to the end rows.
  int unknown_faces;
  RobinEnds<T> robin;
};

// The shape, spacing and material index of op into a variable pass's arguments
// (VarPassArgs, or VarXArgs of the one-kernel x pass).
template <class T, class Args>
void take_operator(Args& a, const OperatorView<T>& op) {
  for (int axis = 0; axis < 3; ++axis) {
    a.n[axis] = op.n[axis];
    a.inv_h2[axis] = op.inv_h2[axis];
  }
  a.material = op.material;
  a.material_face_mean = op.material_face_mean;
  a.material_pitch = op.material_pitch;
  for (int face = 0; face < 6; ++face) {
    a.robin.h[face] = op.robin_h[face];
    a.robin.h_field[face] = op.robin_h_field[face];
  }
  for (int axis = 0; axis < 3; ++axis) a.robin.inv_h[axis] = op.inv_h[axis];
}

// Plain y/z solves of an alpha field (yz_var_kernel with kSolveOnly, WarpLineSolve): the
// nodes [first, last] per axis that are solved, as in SolveArgs.
template <class T>
struct VarSolveArgs : VarPassArgs<T> {
  int first[3];
  int last[3];
};
// A plain solve of d in place over the nodes first..last per axis of op's field.
template <class T>
VarSolveArgs<T> var_solve_args(const OperatorView<T>& op, const int (&first)[3], const int (&last)[3], T tau, T* d) {
  VarSolveArgs<T> a{};
  take_operator(a, op);
  for (int axis = 0; axis < 3; ++axis) {
    a.first[axis] = first[axis];
    a.last[axis] = last[axis];
  }
  a.tau = tau;
  a.alpha = op.alpha_field;
  a.d = d;
  return a;
}

// ---------------------------------------------------------------------------------------
// Passes y (kAxis 1) and z (kAxis 2): yz_pass_kernel with an alpha tile after the data
// tile (n rows: the line's Dirichlet nodes give the end faces). Block 32 W threads,
// persistent over the tiles of L lines. Data: R rows, alpha: n rows, of L+1 values. Rows
// of a lane's chunk past the line are not read (padding is 0); alpha reads past row n-1
// are clamped to it. kSolveOnly: a plain solve of d in place over the unknowns
// a.first..a.last of each axis (VarSolveArgs); the data tile then holds all n nodes of
// the line, so that a Dirichlet end value (s d, s the end face's weight) moves into the
// first or last row from the tile, and a Neumann end row is halved (its outer face has no
// weight and its identity term is 1/2), as WarpLineSolve's constant-alpha rows are.
// NB = 2: two buffers, the next tile's copy in flight while the block solves and stores
// the current one (one block per SM); the fused z pass then also prefetches that tile's u
// into L2 for its update. kSharedAlpha (NB = 2, alpha): the two data buffers share one
// alpha tile, after them; the next tile's data copy is issued once a tile has landed, in
// flight while the warps take their lines' faces into registers, and after a barrier its
// alpha (in double a line's columns at a time, each after its faces), in flight during
// the solves and the stores (so 128-byte rows fit: var_tile_launch). (512^3 float, H100,
// bench gpu: the data issued before the faces rather than with the alpha after them took
// the plain y solve 0.690 -> 0.685 ms, z 0.717 -> 0.712, the alpha step 2.173 -> 2.159;
// tiles of 64-byte rows in two blocks per SM, each with two data buffers and an alpha
// tile, ran y 0.824, z 0.93.)
// kMaterial (fused passes): the alpha tile holds the nodes' material bytes (rows of L + 4
// bytes: the lanes' rows fall in distinct banks, as with L + 1 values), copied in 4-byte
// pieces, and the face weights come from the table of face means (material_index.hpp),
// times tau inv_h2 (the products the solve made face by face, rounded alike), copied to
// shared memory ahead of the tiles. Dynamic shared memory: yz_var_smem_bytes.
//
// 512^3, H100, adi3d_fused_tune (2026-11-23), one buffer of 8 warps against two of W
// warps: y 0.87 -> 0.75-0.77 ms float (W 16; 0.80 with 8), 1.75 -> 1.29-1.33 double (W 8);
// z 1.37 -> 1.21-1.23 float; double z 2.30-2.33 with one buffer, 2.41-2.42 with two (so it
// keeps one). Updates with 16 loads of u in flight per thread, not 8: double z 2.40 ->
// 2.31, float z (two buffers, with the prefetch) 1.30 -> 1.22. Not kept: copying u into a
// tile of its own (float z 1.28, double 2.62); 128-byte rows with one buffer and the next
// tile prefetched into L2 (float z 1.26, y 0.83; double z 2.42, y 1.42).
template <int L>
constexpr int kMaterialTilePitch = L + 4;  // bytes per row of a material tile
// Rows of a material tile: every node whose byte the chunks' faces read (nodes 0..32 C + 1
// for chunks of C rows), so that they read it without clamping to the line; the rows past
// the line's n are zeros (material 0; the padding drops what it looks up).
template <int C>
constexpr int kMaterialTileRows = 32 * C + 2;
template <class T, int L>
__host__ __device__ std::size_t yz_var_alpha_tile_bytes(int n) {
  return static_cast<std::size_t>(n) * (L + 1) * sizeof(T);
}
// A tile buffer: the data tile, then its alpha or material tile (none with kSharedAlpha:
// the buffers share one alpha tile, after them). The data tile has a row per unknown: n
// rows for a plain solve's nodes and lines with Neumann ends (kNeumann), else n - 2.
template <class T, int L, int C, bool kSolveOnly, bool kMaterial, bool kSharedAlpha = false, bool kNeumann = false>
__host__ __device__ std::size_t yz_var_buffer_bytes(int n) {
  const std::size_t data = static_cast<std::size_t>(kSolveOnly || kNeumann ? n : n - 2) * (L + 1) * sizeof(T);
  if constexpr (kSharedAlpha) return data;
  if constexpr (!kMaterial) return data + yz_var_alpha_tile_bytes<T, L>(n);
  return (data + static_cast<std::size_t>(kMaterialTileRows<C>) * kMaterialTilePitch<L> + 15) / 16 * 16;
}
template <class T, bool kMaterial>
constexpr std::size_t kFaceTableBytes = kMaterial ? kMaxMaterials * kMaxMaterials * sizeof(T) : 0;
template <class T, int L, int C, bool kSolveOnly = false, int NB = 1, bool kMaterial = false, bool kSharedAlpha = false,
          bool kNeumann = false>
std::size_t yz_var_smem_bytes(int n) {
  return kFaceTableBytes<T, kMaterial> +
         NB * yz_var_buffer_bytes<T, L, C, kSolveOnly, kMaterial, kSharedAlpha, kNeumann>(n) +
         (kSharedAlpha ? yz_var_alpha_tile_bytes<T, L>(n) : 0);
}

// Blocks per SM the register budget is cut for: with two tile buffers, one.
template <class T, int C, int NB, int W>
constexpr int yz_var_min_blocks() {
  return NB == 2 || W > 8 ? 1 : sizeof(T) == 4 && C <= 17 ? 2 : 1;
}

template <class T, int L, int C, int kAxis, bool kSolveOnly = false, int NB = 1, int W = 8, bool kMaterial = false,
          bool kSharedAlpha = false, bool kNeumann = false>
__global__ void __launch_bounds__(32 * W, (yz_var_min_blocks<T, C, NB, W>()))
    yz_var_kernel(std::conditional_t<kSolveOnly, VarSolveArgs<T>, VarPassArgs<T>> a) {
  constexpr int kThreads = 32 * W;
  constexpr int LPW = L / W;        // lines per warp
  constexpr int RS = kThreads / L;  // rows per sweep of the block
  constexpr int P = L + 1;          // row pitch in shared memory
  static_assert(L % W == 0 && (L & (L - 1)) == 0, "L: a power of two, a multiple of the warps");
  static_assert(NB == 1 || NB == 2, "one or two tile buffers");
  static_assert(!(kMaterial && kSolveOnly), "material tiles serve the fused passes");
  static_assert(!kSharedAlpha || (NB == 2 && !kMaterial), "a shared alpha tile: two data buffers");
  static_assert(!(kNeumann && kSolveOnly), "a plain solve takes its span from its args");
  constexpr int PB = kMaterialTilePitch<L>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int n = a.n[kAxis];
  const int nx = a.n[0], ny = a.n[1];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  TileSpan span;
  if constexpr (kNeumann)
    span = fused_tile_span<kAxis>(a);
  else
    span = tile_span<kAxis, kSolveOnly>(a);
  const int first = span.first, R = span.R, i_first = span.i_first, i_last = span.i_last, o_first = span.o_first,
            planes = span.planes;
  // The data tile's row 0 is node d0 of the line: the first unknown (the fused passes), or
  // node 0 (a plain solve: all n nodes).
  const int d0 = kSolveOnly ? 0 : kNeumann ? first : 1;
  const int data_rows = kSolveOnly ? n : R;
  // The face table, then buffer b: data tile, then alpha (or material) tile. (A buffer's
  // size in values, an int: a 64-bit size held through the loop cost the solve-only
  // kernels of two buffers registers, and spills.)
  const int buffer_elems =
      static_cast<int>(yz_var_buffer_bytes<T, L, C, kSolveOnly, kMaterial, kSharedAlpha, kNeumann>(n) / sizeof(T));
  T* const table = reinterpret_cast<T*>(smem_raw);
  T* const tile0 = reinterpret_cast<T*>(smem_raw + kFaceTableBytes<T, kMaterial>);
  const int tiles_i = (nx + L - 1) / L;
  const int total = tiles_i * planes;
  const int tid = threadIdx.x;

  const int col = tid % L, row0 = tid / L;
  const std::size_t row_stride = kAxis == 1 ? static_cast<std::size_t>(nx) : nxy;
  const std::size_t sweep = RS * row_stride;
  // Offset of (node r0, column c) of tile t (row 0: the line's node 0); offset: of this
  // thread's (row0, col).
  auto offset_at = [&](int t, int c, int r0, bool& ok) -> std::size_t {
    const int i = (t % tiles_i) * L + c;
    const std::size_t o = o_first + t / tiles_i;
    ok = i >= i_first && i <= i_last;
    return i + (kAxis == 1 ? nxy * o : nx * o) + r0 * row_stride;
  };
  auto offset = [&](int t, bool& ok) { return offset_at(t, col, row0, ok); };
  // Column c's rows r0, r0 + rs, ... below rows, from p0 (node r0) on: a column past the
  // grid (not ok) copies zeros, its source held at base (read nothing).
  auto copy_rows_at = [&](const T* base, T* dst, std::size_t p0, bool ok, int rows, int c, int r0, int rs) {
    const T* src = ok ? base + p0 : base;
    const std::size_t step = ok ? rs * row_stride : 0;
    dst += r0 * P + c;
    for (int r = r0; r < rows; r += rs, src += step, dst += rs * P) cp_async<sizeof(T)>(dst, src, ok);
  };
  auto copy_rows = [&](const T* base, T* dst, std::size_t p0, bool ok, int rows) {
    copy_rows_at(base, dst, p0, ok, rows, col, row0, RS);
  };

  const int warp = tid / 32, lane = tid & 31;
  const T tw = a.tau * a.inv_h2[kAxis];
  // The lane's chunk: rows q < lim are the line's, row q is node lane_node + q (solve-only;
  // the fused passes: node lane C + q + 1); and a plain solve's line ends.
  const PlainLineEnds<T, C> ends(lane, first, R, n);
  const int lim = ends.lim, lane_node = ends.lane_node;
  // Material rows: every column of the tile (the index's rows are padded to a multiple of
  // 32 bytes, so a tile never reads past its row), L / 4 threads per row.
  constexpr int kWords = L / 4;
  constexpr int MRS = kThreads / kWords;  // material rows per sweep
  const int mword = tid % kWords, mrow0 = tid / kWords;
  const std::size_t mpitch = static_cast<std::size_t>(a.material_pitch);
  const std::size_t mstride = kAxis == 1 ? mpitch : mpitch * ny;
  auto copy_material = [&](int t, unsigned char* dst) {
    const std::size_t o = o_first + t / tiles_i;
    const std::uint8_t* src = a.material + (t % tiles_i) * L + 4 * mword + (kAxis == 1 ? mpitch * ny * o : mpitch * o) +
                              mrow0 * mstride;
    dst += mrow0 * PB + 4 * mword;
    for (int r = mrow0; r < n; r += MRS, src += MRS * mstride, dst += MRS * PB) cp_async<4>(dst, src, true);
  };
  // The alpha (or material) tile of buffer b.
  auto alpha_tile = [&](int b) {
    return kSharedAlpha ? tile0 + NB * buffer_elems : tile0 + b * buffer_elems + data_rows * P;
  };
  auto copy_data = [&](int t, int b) {
    bool ok;
    const std::size_t p0 = offset(t, ok);  // node row0 of the line
    copy_rows(a.d, tile0 + b * buffer_elems, p0 + d0 * row_stride, ok, data_rows);
  };
  auto copy_coefficients = [&](int t, int b) {
    if constexpr (kMaterial) {
      copy_material(t, reinterpret_cast<unsigned char*>(alpha_tile(b)));
    } else {
      bool ok;
      copy_rows(a.alpha, alpha_tile(b), offset(t, ok), ok, n);
    }
  };
  // Part s of tile t's shared alpha tile: the columns of the warps' lines s (column
  // warp LPW + s), W of them, by every thread (rows 32 apart): the lines' faces leave the
  // tile a line at a time (the shared alpha tile's groups, below).
  auto copy_alpha_part = [&](int t, int s) {
    const int pcol = (tid % W) * LPW + s, prow0 = tid / W;
    bool ok;
    const std::size_t p0 = offset_at(t, pcol, prow0, ok);
    copy_rows_at(a.alpha, alpha_tile(0), p0, ok, n, pcol, prow0, 32);
  };
  auto copy_tile = [&](int t, int b) {
    copy_data(t, b);
    copy_coefficients(t, b);
  };
  // Tile t + gridDim.x, if any, into buffer b by copy (copy_tile, or with kSharedAlpha
  // copy_data and then copy_coefficients), and a commit.
  auto copy_next = [&](int t, int b, auto copy) {
    const int next = t + gridDim.x;
    if (next < total) {
      copy(next, b);
      // The alpha z pass's u of that tile into L2, for the update's loads, with 64-byte
      // rows (512^3 float, H100: the material tiles' z pass ran slower with it, 0.85
      // against 0.74 ms, and so did the shared alpha tile's, 0.983 against 0.896).
      bool ok2;
      const std::size_t q0 = offset(next, ok2);
      if (!kSolveOnly && !kMaterial && !kSharedAlpha && kAxis == 2 && ok2 && (col == 0 || col == L - 1))
        for (int r = row0; r < R; r += RS) prefetch_l2(a.u + q0 + (r + d0 - row0) * row_stride);
    }
    cp_async_commit();
  };
  // The solve's weights (tw times the means), and zeros in the material rows past the
  // line's n nodes (the copies write only those below): visible after the first tile's
  // barrier.
  if constexpr (kMaterial) {
    for (int e = tid; e < kMaxMaterials * kMaxMaterials; e += kThreads) table[e] = tw * a.material_face_mean[e];
    constexpr int kPastWords = (kMaterialTileRows<C> * PB + 3) / 4;
    for (int b = 0; b < NB; ++b) {
      auto* words = reinterpret_cast<unsigned*>(alpha_tile(b));
      for (int e = n * PB / 4 + tid; e < kPastWords; e += kThreads) words[e] = 0u;
    }
  }
  if (NB == 2) {
    if (static_cast<int>(blockIdx.x) < total) copy_tile(blockIdx.x, 0);
    cp_async_commit();
  }
  // tw times the mean of two nodes' alpha: in float by weighted_harmonic_mean (the same
  // bits; its gains in fast_divide.cuh), in double as before (with it, ptxas spilled more
  // in the double z tiles: 8 -> 20 bytes in the fused pass's shared alpha tile).
  const T two_tw = T(2) * tw;
  auto weight = [&](T a0, T a1) {
    if constexpr (std::is_same_v<T, float>)
      return weighted_harmonic_mean(a0, a1, two_tw);
    else
      return face_weight(a0, a1, tw);
  };
  // Face q of this lane's chunk in line s of this warp's: tau inv_h2 times the mean of its
  // two nodes' alpha (kSolveOnly, kNeumann: 0 for faces out of the line, past a Neumann end
  // or in the padding), or the table's weight for their materials.
  auto face_of = [&](const T* atile, int s, int q) -> T {
    const T* ca = atile + warp * LPW + s;
    auto al = [&](int m) { return ca[max(0, min(m, n - 1)) * P]; };
    const int m = lane_node + q;  // face q joins nodes m - 1 and m
    if constexpr (kNeumann && kMaterial) {
      // (Node m - 1 is -1 only before a Neumann end, whose face ends.face drops.)
      const unsigned char* cm = reinterpret_cast<const unsigned char*>(atile) + warp * LPW + s;
      return ends.face(q, table[static_cast<int>(cm[max(m - 1, 0) * PB]) * kMaxMaterials + static_cast<int>(cm[m * PB])]);
    } else if constexpr (kSolveOnly || kNeumann) {
      return ends.face(q, weight(al(m - 1), al(m)));  // (loads shared with the faces beside)
    } else if constexpr (kMaterial) {
      // The lane's first face's first node: row lane C of the tile.
      const unsigned char* cm = reinterpret_cast<const unsigned char*>(atile) + lane * C * PB + warp * LPW + s;
      return table[static_cast<int>(cm[q * PB]) * kMaxMaterials + static_cast<int>(cm[(q + 1) * PB])];
    } else {
      return weight(al(lane * C + q), al(lane * C + q + 1));  // nodes lane C + q, + 1
    }
  };
  // A plain solve's end rows of line s, in the tile (PlainLineEnds), given the faces before
  // the lane's chunk and past its last unknown.
  auto end_rows = [&](T* tile, int s, T face_first, T face_past) {
    ends.end_rows(tile + (lane_node - d0) * P + warp * LPW + s, P, face_first, face_past);
  };
  const int q_end = ends.q_end();
  // Line s of this warp's in tile t (in place), its faces by face(q).
  auto solve_line = [&](T* tile, int t, int s, auto face) {
    T* c = tile + (lane_node - d0) * P + warp * LPW + s;
    T v[C];
#pragma unroll
    for (int q = 0; q < C; ++q) v[q] = q < lim ? c[q * P] : T(0);
    if constexpr (kSolveOnly || kNeumann) {
      // The line's entry in its faces' arrays (a line past the grid's takes entry 0).
      const int i = (t % tiles_i) * L + warp * LPW + s;
      const std::size_t entry =
          i >= i_first && i <= i_last ? i + static_cast<std::size_t>(nx) * (o_first + t / tiles_i) : 0;
      const T robin_lo = a.robin.template term<2 * kAxis>(a.tau, entry);
      const T robin_hi = a.robin.template term<2 * kAxis + 1>(a.tau, entry);
      warp_solve_var<T, C, false>(v, face, [&](int q) { return ends.mass(q, robin_lo, robin_hi); }, lim);
    } else {
      warp_solve_var<T, C, false>(v, face, [](int) { return T(1); }, lim);
    }
#pragma unroll
    for (int q = 0; q < C; ++q)
      if (q < lim) c[q * P] = v[q];
  };

  int buffer = 0;
  for (int t = blockIdx.x; t < total; t += gridDim.x, buffer ^= NB - 1) {
    T* const tile = tile0 + buffer * buffer_elems;
    const T* const atile = alpha_tile(buffer);
    bool ok;
    const std::size_t p0 = offset(t, ok);  // node row0 of the line
    if constexpr (NB == 1) {
      __syncthreads();  // the last tile's stores are done
      copy_tile(t, 0);
      cp_async_commit();
      cp_async_wait<0>();
    } else if constexpr (kSharedAlpha) {
      cp_async_wait<0>();  // tile t: its data was issued during the last faces, its alpha after them
    } else {
      // The other buffer's last reads by other threads were in the last solve (a barrier
      // ago), and by this thread in its stores, issued. A plain solve's stores read rows
      // other threads copied: they wait for everyone's.
      if (kSolveOnly) __syncthreads();
      copy_next(t, buffer ^ 1, copy_tile);
      cp_async_wait<1>();  // tile t
    }
    __syncthreads();
    if constexpr (kSharedAlpha) {
      // The next tile's data into the other buffer (its stores, any thread's, are done),
      // in flight while the warps take the faces of their lines into registers.
      copy_next(t, buffer ^ 1, copy_data);
      // Then by groups of FG lines: the faces of the warps' lines in the group into
      // registers, a barrier, the next tile's columns of those lines in the alpha tile
      // (copy_alpha_part; all of it, by copy_coefficients, with one group) in flight during
      // their solves and what follows them. Double takes a line at a time: with the faces of
      // both its lines held, ptxas spilled at 255 registers (var_tile_launch has the
      // timings). Float holds both: line by line (512^3, H100, bench gpu), its plain y solve
      // ran 0.676 -> 0.722 ms, z 0.703 -> 0.758 (each group's copy lands later, and the
      // barriers are more).
      constexpr int FG = sizeof(T) == 8 ? 1 : LPW;
      // (Lines by index constants: a loop the compiler kept rolled put w in local memory.)
      for_each_index(
          [&](auto g) {
            T w[FG][C + 1];
#pragma unroll
            for (int k = 0; k < FG; ++k) {
              const int s = g * FG + k;
              // (A line's end rows before its faces: after them, ptxas spilled 108 bytes.)
              if constexpr (kSolveOnly) end_rows(tile, s, face_of(atile, s, 0), face_of(atile, s, q_end));
#pragma unroll
              for (int q = 0; q <= C; ++q) w[k][q] = face_of(atile, s, q);
            }
            __syncthreads();
            copy_next(t, 0, [&](int next, int) {
              if constexpr (FG == LPW)
                copy_coefficients(next, 0);
              else
                copy_alpha_part(next, g);
            });
            for_each_index([&](auto k) { solve_line(tile, t, g * FG + k, [&](int q) { return w[k][q]; }); },
                           std::make_integer_sequence<int, FG>{});
          },
          std::make_integer_sequence<int, LPW / FG>{});
    } else {
#pragma unroll 1
      for (int s = 0; s < LPW; ++s) {
        if constexpr (kSolveOnly) end_rows(tile, s, face_of(atile, s, 0), face_of(atile, s, q_end));
        solve_line(tile, t, s, [&](int q) { return face_of(atile, s, q); });
      }
    }
    __syncthreads();
    if (!ok) continue;
    const T* x = tile + (first - d0 + row0) * P + col;
    const std::size_t p1 = p0 + first * row_stride;  // node row0 + first: unknown row row0
    if (kAxis == 1 || kSolveOnly) {
      T* dst = a.d + p1;
      for (int r = row0; r < R; r += RS, dst += sweep, x += RS * P) *dst = *x;
    } else {
      add_column_to_u<16, RS, P>(a.u + p1, x, row0, R, sweep);  // 16 loads in flight: above
    }
  }
  cp_async_wait<0>();
}

// ---------------------------------------------------------------------------------------
// The yz_var_kernel that takes lines along axis (1 or 2) of n nodes, chunk capacity cap
// (chunk_cap), and its block and shared memory: two tile buffers of kVarTwoTileWarps
// warps where they fit in smem_limit bytes, for lines of 130 to 674 (float) or 802
// (double) nodes (kVarTwoTiles: the shorter lines' grids are small and the longer lines'
// tiles take more than half an SM), except the fused z pass in double (measured above),
// else one buffer of 8 warps.
template <class T>
constexpr int kVarTwoTileWarps = sizeof(T) == 4 ? 16 : 8;  // a line per warp; registers
// Chunk capacities whose lines take two tile buffers where they fit. Float lines of
// 675-802 nodes (C = 25) keep one: 768^3, H100, the variable step ran 15.3 ms with two
// buffers of 16 warps (which spill at 128 registers) and 14.8 with two of 8, against
// 13.4 with one (and 13.8 ms with one buffer and 33-row chunks).
template <class T, int C>
constexpr bool kVarTwoTiles = C >= 9 && C <= (sizeof(T) == 4 ? 21 : 25);

template <class T, bool kSolveOnly>
struct VarTileLaunch {
  void (*kernel)(std::conditional_t<kSolveOnly, VarSolveArgs<T>, VarPassArgs<T>>);
  int threads;
  std::size_t smem;
  int lines;  // per tile
};

// Lines per tile: with material tiles (a byte per node in place of alpha's 4 or 8) the
// 128-byte rows of the constant passes fit. 512^3 on an H100 (adi3d_fused_tune,
// 2026-11-24), 64-byte rows against 128: float z 0.998 -> 0.774 ms (one buffer: 98% of 2
// copies; two 0.831), y 0.643 -> 0.600 (two buffers); double z 2.00 -> 1.52, y 1.00 both.
template <class T, bool kMaterial>
constexpr int var_tile_lines() {
  return kMaterial ? kYZLines<T> : kVarYZLines<T>;
}

// Double material tiles: one buffer in blocks of 4 warps where two blocks fit an SM's
// shared memory (lines of up to 674 nodes), so that one block's copies run beside the
// other's solve: the z pass, and the y pass where it does not take two buffers. 512^3 on
// an H100 (adi3d_fused_tune, 2026-11-24), against one buffer of 8 warps: z 1.54 -> 1.41
// ms; y 1.02 (two buffers of 8) -> 1.01, but since the one-reciprocal solve (2026-11-24)
// two buffers of 8 take 0.965 against 1.018. In float, 4 warps were slower (z 0.74 ->
// 0.87, y 0.57 -> 0.64), and so were the alpha tiles' (double z 2.27 -> 2.50, y 1.31 with
// two buffers -> 1.58; float z 1.20 -> 1.52).
template <class T, bool kMaterial>
constexpr bool kVarPairedBlocks = kMaterial && std::is_same_v<T, double>;
constexpr int kVarPairedWarps = 4;

// Alpha tiles of 128-byte rows where two data tiles and one alpha tile fit (lines of up to
// about 570 nodes): the warps take their lines' faces into registers, and then the alpha
// tile takes the next tile's copy, in flight during the solves and the stores. 512^3 on
// an H100 (adi3d_fused_tune, 2026-11-24), against the tiles of 64-byte rows: float y
// 0.710 -> 0.660 ms (77 -> 83% of 1.5 copies), z 1.170 -> 0.898 (63 -> 81% of 2; without
// the L2 prefetch of u, 0.983 with it); plain solves y 0.766 -> 0.702, z 0.833 -> 0.736;
// double z 2.209 (one buffer) -> 1.896. Double y 1.351 -> 1.508 (plain 1.350 -> 1.471):
// its warps (8, registers) solve two lines each, so it keeps 64-byte rows; with their
// faces taken a line at a time (yz_var_kernel), the plain y still ran 1.28-1.31 -> 1.45
// ms, but the plain z 1.524 / 1.528 -> 1.471 / 1.473 (A/B in one run, bench gpu; 1.48
// against 1.47 with both lines' faces held, which spilled), and the double alpha step
// kept its 5.65 ms (the fused z pass then spills no more). So z takes them in both.
template <class T>
constexpr bool kSharedAlphaTilesY = std::is_same_v<T, float>;
// Longer chunks hold more faces than the registers keep (the float plain solve of C = 21
// spilled 12 to 108 bytes).
constexpr int kSharedAlphaMaxChunk = 17;

// kNeumann (the fused passes): the kernels built for Neumann faces, whose tiles cover the
// unknowns (VarPassArgs::unknown_faces); lines of n nodes, cap from their unknowns.
template <class T, bool kSolveOnly, bool kMaterial = false, bool kNeumann = false>
VarTileLaunch<T, kSolveOnly> var_tile_launch(int axis, int n, int cap, std::size_t smem_limit) {
  static_assert(!(kSolveOnly && kNeumann), "a plain solve takes its span from its args");
  constexpr int L = var_tile_lines<T, kMaterial>();
  constexpr bool N = kNeumann;
  return with_chunk_cap(cap, [&](auto C) -> VarTileLaunch<T, kSolveOnly> {
    constexpr int c = C.value;
    if constexpr (kVarPairedBlocks<T, kMaterial>) {
      constexpr int W = kVarPairedWarps;
      const std::size_t smem = yz_var_smem_bytes<T, L, c, kSolveOnly, 1, kMaterial, false, N>(n);
      // the driver's 1 KiB a block besides
      if ((axis == 2 || !kVarTwoTiles<T, c>) && 2 * smem + 1024 <= smem_limit)
        return {axis == 1 ? yz_var_kernel<T, L, c, 1, kSolveOnly, 1, W, kMaterial, false, N>
                          : yz_var_kernel<T, L, c, 2, kSolveOnly, 1, W, kMaterial, false, N>,
                32 * W, smem, L};
    }
    if constexpr (!kMaterial && kVarTwoTiles<T, c> && c <= kSharedAlphaMaxChunk) {
      constexpr int L2 = kYZLines<T>;
      const std::size_t smem = yz_var_smem_bytes<T, L2, c, kSolveOnly, 2, false, true, N>(n);
      if (smem <= smem_limit) {
        if (axis == 2)
          return {yz_var_kernel<T, L2, c, 2, kSolveOnly, 2, kVarTwoTileWarps<T>, false, true, N>,
                  32 * kVarTwoTileWarps<T>, smem, L2};
        if constexpr (kSharedAlphaTilesY<T>)
          if (axis == 1)
            return {yz_var_kernel<T, L2, c, 1, kSolveOnly, 2, kVarTwoTileWarps<T>, false, true, N>,
                    32 * kVarTwoTileWarps<T>, smem, L2};
      }
    }
    if constexpr (kVarTwoTiles<T, c>) {
      constexpr int W = kVarTwoTileWarps<T>;
      // The fused z pass keeps one buffer in double (measured above). With float material
      // tiles (512^3, H100) one buffer ran 0.744 / 0.748 / 0.757 ms over three runs, two
      // 0.738 / 0.738 / 0.788 (0.85 with the L2 prefetch of u); since the one-reciprocal
      // solve, two take 0.726 against 0.745.
      constexpr bool kTwoTilesZ = kMaterial ? std::is_same_v<T, float> : !(std::is_same_v<T, double> && !kSolveOnly);
      const std::size_t smem = yz_var_smem_bytes<T, L, c, kSolveOnly, 2, kMaterial, false, N>(n);
      if (smem <= smem_limit) {
        if (axis == 1) return {yz_var_kernel<T, L, c, 1, kSolveOnly, 2, W, kMaterial, false, N>, 32 * W, smem, L};
        if constexpr (kTwoTilesZ)
          return {yz_var_kernel<T, L, c, 2, kSolveOnly, 2, W, kMaterial, false, N>, 32 * W, smem, L};
      }
    }
    return {axis == 1 ? yz_var_kernel<T, L, c, 1, kSolveOnly, 1, 8, kMaterial, false, N>
                      : yz_var_kernel<T, L, c, 2, kSolveOnly, 1, 8, kMaterial, false, N>,
            256, yz_var_smem_bytes<T, L, c, kSolveOnly, 1, kMaterial, false, N>(n), L};
  });
}

}  // namespace adi3d::cuda::fused
