// operator_rhs: r = scale (A u + f + Neumann terms) on unknown nodes, 0 on Dirichlet nodes,
// in four variants (DESIGN.md §3): naive, Z-pencil register tiling, Z-pencil + shared XY
// tile (seed 003), and x neighbours by warp shuffles (register cache, seed 001). Moves
// 2 arrays per point (u in, r out) plus f and alpha when present; neighbours hit cache.
// Weights, row kinds and neighbour positions come from discretization.hpp (axis_row); the
// variants differ only in where the neighbour values are read from.
// Every node off the boundary has interior rows in every direction, so the pencil variants
// split the grid: a lean kernel for the interior block (no row kinds, fixed neighbour
// offsets; constant weights, or weights from an alpha field carried along z in registers
// like u) and the general point rule for the boundary shell, O(n^2) nodes.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/fast_divide.cuh"
#include "solvers/cuda/common/plane_ring.cuh"
#include "solvers/cuda/common/plane_split.hpp"
#include "solvers/discretization.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/material_index.hpp"

#include <algorithm>
#include <type_traits>

namespace adi3d::cuda {
namespace {

constexpr int TX = StencilPolicy::tile_x;
constexpr int TY = StencilPolicy::tile_y;
constexpr int KC = StencilPolicy::k_chunk;
static_assert(TX == 32, "the shuffle variant needs one warp per x row of the tile");

// Source, Neumann terms and scaling of an unknown node, in the order of the CPU reference.
template <class T>
__device__ __forceinline__ T finish_rhs(const OperatorView<T>& op, T value, const T* f,
                                        const FacePtrs<T>& g, int i, int j, int k, std::size_t p,
                                        T scale) {
  if (f) value += f[p];
  const int idx[3] = {i, j, k};
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const RowKind kind = row_kind(idx[a], op.n[a], op.lo[a], op.hi[a]);
    const int side = kind == RowKind::neumann_lo ? 0 : kind == RowKind::neumann_hi ? 1 : -1;
    // Constant indices keep the face pointers in the parameter bank (a runtime index
    // would copy FacePtrs to the stack).
    const T* face = side == 0 ? g.g[2 * a] : side == 1 ? g.g[2 * a + 1] : nullptr;
    if (!face) continue;
    const int ua = a == 0 ? 1 : 0, va = a == 2 ? 1 : 2;
    const std::size_t fp = idx[ua] + static_cast<std::size_t>(op.n[ua]) * idx[va];
    value += neumann_term(kind, alpha_at(op, a, p), face[fp], op.inv_h[a]);
  }
  return scale * value;
}

// The general point rule at node (i, j, k): 0 on Dirichlet nodes, else finish_rhs(A u).
template <class T>
__device__ __forceinline__ void general_node(const OperatorView<T>& op, const T* __restrict__ u,
                                             const T* __restrict__ f, const FacePtrs<T>& g, T scale,
                                             T* __restrict__ r, int i, int j, int k) {
  const std::size_t p = i + static_cast<std::size_t>(op.n[0]) * (j + static_cast<std::size_t>(op.n[1]) * k);
  r[p] = is_dirichlet_node(op, i, j, k) ? T(0)
                                        : finish_rhs(op, apply_operator(op, u, i, j, k), f, g, i, j, k, p, scale);
}

// kConstAlpha: the view is known to carry no alpha field, so axis_row's alpha loads fold
// into constants (the same arithmetic, fewer loads).
template <class T, bool kConstAlpha>
__global__ void __launch_bounds__(TX* TY)
    naive_kernel(OperatorView<T> op, const T* __restrict__ u, const T* __restrict__ f,
                 FacePtrs<T> g, T scale, T* __restrict__ r) {
  if (kConstAlpha) op.alpha_field = nullptr;
  const int i = blockIdx.x * TX + threadIdx.x, j = blockIdx.y * TY + threadIdx.y;
  if (i >= op.n[0] || j >= op.n[1]) return;
  for (int k = blockIdx.z; k < op.n[2]; k += gridDim.z) general_node(op, u, f, g, scale, r, i, j, k);
}

// The boundary shell: every node with an index on the first or last node of its axis,
// each once, as runs of nodes: run e of `shell_runs` is a row along x of a y face (whole),
// then of a z face (without the y edges), then a column along y of an x face (without the
// y and z edges). A block takes a run: its position costs a division per run, not per
// node (a node's position by 64-bit divisions cost the shuffle stencil about 6 us more at
// 512^3 float, 0.537 against 0.531 ms).
__host__ __device__ inline int shell_runs(const int n[3]) {
  const int my = n[1] > 2 ? n[1] - 2 : 0, mz = n[2] > 2 ? n[2] - 2 : 0;
  const int faces[3] = {n[0] > 1 ? 2 : 1, n[1] > 1 ? 2 : 1, n[2] > 1 ? 2 : 1};
  return faces[1] * n[2] + faces[2] * my + faces[0] * mz;
}

// Run e's first node; returns the axis it runs along (0: n[0] nodes, 1: n[1] - 2 nodes).
__device__ inline int shell_run(const int n[3], int e, int& i, int& j, int& k) {
  const int my = n[1] > 2 ? n[1] - 2 : 0, mz = n[2] > 2 ? n[2] - 2 : 0;
  const int y_runs = (n[1] > 1 ? 2 : 1) * n[2];
  i = 0;
  if (e < y_runs) {
    j = e < n[2] ? 0 : n[1] - 1;
    k = e % n[2];
    return 0;
  }
  e -= y_runs;
  const int z_runs = (n[2] > 1 ? 2 : 1) * my;
  if (e < z_runs) {
    k = e < my ? 0 : n[2] - 1;
    j = 1 + e % my;
    return 0;
  }
  e -= z_runs;
  i = e < mz ? 0 : n[0] - 1;
  j = 1;
  k = 1 + e % mz;
  return 1;
}

constexpr int kShellThreads = 128;
template <class T, bool kConstAlpha>
__global__ void __launch_bounds__(kShellThreads)
    shell_kernel(OperatorView<T> op, const T* __restrict__ u, const T* __restrict__ f, FacePtrs<T> g,
                 T scale, T* __restrict__ r, int runs) {
  if (kConstAlpha) op.alpha_field = nullptr;
  for (int e = blockIdx.x; e < runs; e += gridDim.x) {
    int i = 0, j = 0, k = 0;
    const int axis = shell_run(op.n, e, i, j, k);
    const int count = axis == 0 ? op.n[0] : op.n[1] - 2;
    for (int t = threadIdx.x; t < count; t += kShellThreads)
      general_node(op, u, f, g, scale, r, axis == 0 ? t : i, axis == 0 ? j : j + t, k);
  }
}

// fold_neumann_terms on face `face` of `faces` (neumann_data_faces): finish_rhs at A u = 0
// on its unknown nodes, but those on an earlier face of the set, whose launch folds them
// (the same value: finish_rhs adds every face's term). base may be f (no __restrict__).
template <class T>
__global__ void __launch_bounds__(kShellThreads)
    fold_face_kernel(OperatorView<T> op, unsigned faces, int face, const T* base, FacePtrs<T> g, T* f) {
  const int axis = face / 2;
  // Tangential extents by selects (FaceAxes: u is x but on x faces, v is z but on z faces).
  const int nu = axis == 0 ? op.n[1] : op.n[0], nv = axis == 2 ? op.n[1] : op.n[2];
  const std::size_t count = static_cast<std::size_t>(nu) * nv;
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x) {
    int i = 0, j = 0, k = 0;
    face_node_indices(op.n, face, static_cast<int>(e % nu), static_cast<int>(e / nu), i, j, k);
    if (on_earlier_face(op.n, faces, face, i, j, k) || is_dirichlet_node(op, i, j, k)) continue;
    const std::size_t p = i + static_cast<std::size_t>(op.n[0]) * (j + static_cast<std::size_t>(op.n[1]) * k);
    f[p] = finish_rhs(op, T(0), base, g, i, j, k, p, T(1));
  }
}

// The rows of a node off the boundary of a constant-alpha operator, per axis.
template <class T>
struct InteriorWeights {
  RowWeights<T> w[3];
};

enum class Pencil { registers, smem, shuffle };

// A thread owns column (i, j) over planes [k0, k0 + KC): u at k-1, k, k+1 live in registers
// and each plane costs one new load of u (seed 003, register tiling). The in-plane
// neighbours come from global memory (L1), a shared tile, or warp shuffles. The grid covers
// the interior block [1, n-2]^3, where every row is interior: weights w for constant
// alpha; with kAlphaField, row_weights of op.alpha_field, alpha at k-1, k, k+1 carried in
// registers like u and the x neighbours' alpha traded like u in the shuffle variant.
// kMaterial (with kAlphaField): the same with op.material's bytes in place of alpha and
// the face means looked up in its table (a copy in shared memory) instead of divided.
template <class T, Pencil kMode, bool kAlphaField, bool kMaterial = false>
__global__ void __launch_bounds__(TX* TY, 1)
    pencil_kernel(OperatorView<T> op, InteriorWeights<T> w, const T* __restrict__ u,
                  const T* __restrict__ f, T scale, T* __restrict__ r) {
  static_assert(!kMaterial || kAlphaField, "materials index an alpha field");
  __shared__ T tile[kMode == Pencil::smem ? TY + 2 : 1][kMode == Pencil::smem ? TX + 2 : 1];
  __shared__ T face_table[kMaterial ? kMaxMaterials * kMaxMaterials : 1];
  if constexpr (kMaterial) {
    for (int e = threadIdx.x + TX * threadIdx.y; e < kMaxMaterials * kMaxMaterials; e += TX * TY)
      face_table[e] = op.material_face_mean[e];
    __syncthreads();
  }
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  // The grid starts at node 1 in y and z; in x it keeps the blocks on 128-byte rows (an
  // offset of one node would split every warp's load in two) and lets the threads of
  // nodes 0 and nx-1 load u for their neighbours without writing r.
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * TX + tx, j = 1 + blockIdx.y * TY + ty;
  const int k0 = 1 + blockIdx.z * KC, k1 = min(k0 + KC, nz - 1);
  const bool loads = i < nx && j < ny - 1;
  const bool valid = loads && i >= 1 && i <= nx - 2;  // writes r
  const std::size_t sy = nx, sz = static_cast<std::size_t>(nx) * ny;
  std::size_t p = loads ? i + sy * j + sz * k0 : 0;
  const T* __restrict__ alpha = op.alpha_field;
  // A node's diffusivity: its value, or its material. at(q, mq): the node at offset q of
  // the field, mq of the index.
  using A = std::conditional_t<kMaterial, int, T>;
  const std::size_t msy = op.material_pitch, msz = msy * ny;
  std::size_t mp = kMaterial && loads ? i + msy * j + msz * k0 : 0;
  auto at = [&](std::size_t q, std::size_t mq) -> A {
    if constexpr (kMaterial)
      return op.material[mq];
    else
      return alpha[q];
  };
  T prev = T(0), cur = T(0);
  A aprev = A(0), acur = A(0);
  // Float with an alpha field: face weights made once per face where that costs no memory
  // (the divisions bound the kernel there: fast_divide.cuh). The weight below plane k is
  // the one above plane k-1 (carried), and in the shuffle variant a lane's x face below is
  // the lower lane's face above (shuffled); both take the face's nodes in the order the
  // CPU's per-node rule does (lower, upper: the mean is not symmetric to the bit), so the
  // sums are that rule's. 512^3 on an H100: 0.845 -> 0.783 ms float; double, at 81% of
  // copy without it, went 1.33 -> 1.43 ms with it, and makes both weights of every face.
  constexpr bool kShareFaces = kAlphaField && std::is_same_v<T, float>;
  auto mean = [&](A a0, A a1) -> T {
    if constexpr (kMaterial)
      return face_table[a0 * kMaxMaterials + a1];
    else
      return harmonic_mean_fast(a0, a1);
  };
  T wz_below = T(0);
  if (loads) {
    prev = u[p - sz];
    cur = u[p];
    if (kAlphaField) {
      aprev = at(p - sz, mp - msz);
      acur = at(p, mp);
      if (kShareFaces) wz_below = mean(aprev, acur) * op.inv_h2[2];
    }
  }
  // u of the plane above, loaded an iteration ahead (k0 + 1 <= nz - 1 holds).
  T next = loads && k0 < k1 ? u[p + sz] : T(0);
  // The last row of the tile loads its upper neighbour itself (outside the block).
  const bool last_j = j == ny - 2;
  // Every thread of the block runs the same planes: the barriers and shuffles below are
  // reached by all of them, valid or not.
  for (int k = k0; k < k1; ++k, p += sz, mp += msz) {
    const std::size_t xm = p - 1, xp = p + 1, ym = p - sy, yp = p + sy, zp = p + sz;
    RowWeights<T> wx = w.w[0], wy = w.w[1], wz = w.w[2];
    // u two planes up and this node's f, issued before the plane's work: the sweep is bound
    // by the latency of its loads, not by DRAM. ncu on an H200 (constant alpha, the direct
    // solve's residuals): float 257^3 86 -> 76 us (47 -> 55% of DRAM's peak), 513^3 637 ->
    // 556 us; double unchanged (112 and 888 us, 74-78% of the peak).
    const T after = loads && k + 2 < nz ? u[zp + sz] : T(0);
    const T fk = f && valid ? f[p] : T(0);
    const A anext = kAlphaField && loads ? at(zp, mp + msz) : A(0);
    T uxm = T(0), uxp = T(0), uym = T(0), uyp = T(0);
    A axm = A(0), axp = A(0);  // alpha of the x neighbours (kAlphaField)
    if (kMode == Pencil::smem) {
      __syncthreads();  // the previous plane's tile has been read
      // Only loading threads write: an idle thread's slot may be the halo that the last
      // node loads (racecheck found the unguarded version).
      if (loads) tile[ty + 1][tx + 1] = cur;
      if (valid) {
        if (tx == 0) tile[ty + 1][0] = u[xm];
        if (tx == TX - 1) tile[ty + 1][tx + 2] = u[xp];
        if (ty == 0) tile[0][tx + 1] = u[ym];
        if (ty == TY - 1 || last_j) tile[ty + 2][tx + 1] = u[yp];
      }
      __syncthreads();
      uxm = tile[ty + 1][tx];
      uxp = tile[ty + 1][tx + 2];
      uym = tile[ty][tx + 1];
      uyp = tile[ty + 2][tx + 1];
    } else if (kMode == Pencil::shuffle) {
      // Register cache (seed 001): a warp is one x row; lanes trade their cur values and
      // only the warp's ends read global memory.
      uxm = __shfl_up_sync(0xffffffffu, cur, 1);
      uxp = __shfl_down_sync(0xffffffffu, cur, 1);
      if (kAlphaField) {
        axm = __shfl_up_sync(0xffffffffu, acur, 1);
        axp = __shfl_down_sync(0xffffffffu, acur, 1);
      }
      if (valid) {
        if (tx == 0) uxm = u[xm];
        if (tx == TX - 1) uxp = u[xp];
        uym = u[ym];
        uyp = u[yp];
        if (kAlphaField && tx == 0) axm = at(xm, mp - 1);
        if (kAlphaField && tx == TX - 1) axp = at(xp, mp + 1);
      }
    } else if (valid) {
      uxm = u[xm];
      uxp = u[xp];
      uym = u[ym];
      uyp = u[yp];
    }
    constexpr bool kShareX = kShareFaces && kMode == Pencil::shuffle;
    T wx_below = T(0);
    if (kShareX) {
      // Every lane, converged: the face above this lane's node, then the one below.
      wx.wp = mean(acur, axp) * op.inv_h2[0];
      wx_below = __shfl_up_sync(0xffffffffu, wx.wp, 1);
    }
    if (valid) {
      if (kAlphaField) {
        if (kMode != Pencil::shuffle) {
          axm = at(xm, mp - 1);
          axp = at(xp, mp + 1);
        }
        if (kShareX)
          wx.wm = tx == 0 ? mean(axm, acur) * op.inv_h2[0] : wx_below;
        else
          wx = row_weights_by(mean, RowKind::interior, axm, acur, axp, op.inv_h2[0]);
        wy = row_weights_by(mean, RowKind::interior, at(ym, mp - msy), acur, at(yp, mp + msy), op.inv_h2[1]);
        if (kShareFaces)
          wz = {wz_below, mean(acur, anext) * op.inv_h2[2]};
        else
          wz = row_weights_by(mean, RowKind::interior, aprev, acur, anext, op.inv_h2[2]);
      }
      // The order of apply_operator, so the CPU and GPU sums round alike.
      T sum = T(0);
      sum += wx.wm * (uxm - cur) + wx.wp * (uxp - cur);
      sum += wy.wm * (uym - cur) + wy.wp * (uyp - cur);
      sum += wz.wm * (prev - cur) + wz.wp * (next - cur);
      r[p] = scale * (f ? sum + fk : sum);  // finish_rhs of an interior node
    }
    prev = cur;
    cur = next;
    next = after;
    aprev = acur;
    acur = anext;
    if (kShareFaces) wz_below = wz.wp;
  }
}

// ---------------------------------------------------------------------------------------
// The interior block by plane streaming (sm_90, constant alpha): a block of L line warps
// and a producer warp owns rows j0..j0+L-1 over a range of planes; the producer streams
// the slab's planes of u (rows j0-1..j0+L) through a PlaneRing and line warp w forms r on
// row j0+w of plane k, lanes on consecutive nodes, in the order of apply_operator, into a
// staging row that one bulk store writes whole, with the row's two x-face nodes by the
// general rule; f of the next plane is prefetched into L2. Every value of u comes from
// DRAM once and from L2 about (L+2)/L times, and neither copy costs the line warps an
// instruction per value. Between Dirichlet faces (planes_write_shell) the kernel writes the
// rest of the shell too (zeros): the blocks of the first and last tile the rows j = 0 and
// ny-1 of their planes, a line warp at a time, and the blocks whose range of planes starts
// or ends the grid the rows of their tile in plane 0 or nz-1, so that no shell kernel
// follows (it cost about 5 us of 0.43 ms at 512^3 float).
// Block 32 (L + 1) threads; grid (ceil((ny-2)/L), ceil((nz-2)/kseg)).
//
// Line warps per block: 16 (one block of 17 warps per SM) for rows of kPlanesWideFrom
// values or more where the block fits in shared memory, else 8 (two blocks per SM up to
// about 580 floats). Float on an H100 (adi3d bench gpu, median of 20, 2026-11-23, two
// runs each; docs/perf/planes_lines_h100.txt), % of copy with 8 / 16 lines: n = 256 80 /
// 73, 320 87 / 81, 384 89 / 84, 448 92 / 88, 512 86 / 93, 576 83 / 91, 640 56 / 89 (8
// lines: one block per SM there). At 512 also tried: 16 lines with 5 slots 84.5%, 12
// with 5 or 6 slots 85 / 84, 8 lines with 5, 6 or 8 slots 83.5-84% (one block per SM),
// and stores straight from the lanes instead of a staging row and a bulk store, which
// frees room for slots: 76-78% (8 lines, 4 or 5 slots), 84% (8 lines, 6 slots).
constexpr int kPlanesLines = 8;
constexpr int kPlanesWideLines = 16;
constexpr int kPlanesWideFrom = 512;
constexpr int kPlanesSlots = 4;
template <class T>
int planes_row_stride(int nx) {
  constexpr int V = 16 / sizeof(T);
  return (nx + V - 1) / V * V;
}
template <class T, int L, int NS>
std::size_t planes_smem_bytes(int nx) {
  return static_cast<std::size_t>(NS * (L + 2) + L) * planes_row_stride<T>(nx) * sizeof(T) +
         2 * NS * sizeof(unsigned long long);
}

// Whether the constant planes kernel writes the boundary shell itself: where every face is
// Dirichlet (zeros, no loads). Elsewhere the shell kernel follows it: a warp making a row
// of Neumann or periodic nodes by the general rule (u from global memory, each node's
// loads waited for in turn) held up the ring of its whole block (512^3 float, H100, ncu:
// 1.49 ms against 0.39 with insulated y faces).
template <class T>
bool planes_write_shell(const OperatorView<T>& op) {
  for (int a = 0; a < 3; ++a)
    if (op.lo[a] != BoundaryKind::dirichlet || op.hi[a] != BoundaryKind::dirichlet) return false;
  return true;
}

template <class T, int L, int NS>
__global__ void __launch_bounds__(32 * (L + 1))
    planes_kernel(OperatorView<T> op, FacePtrs<T> g, int stride, int kseg, InteriorWeights<T> w,
                  const T* __restrict__ u, const T* __restrict__ f, T scale, T* __restrict__ r, bool shell) {
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int j0 = 1 + blockIdx.x * L;
  const int kb = 1 + blockIdx.y * kseg;
  const int ke = min(kb + kseg, nz - 1);  // planes kb..ke-1 are written
  if (kb >= ke) return;
  T* slots = reinterpret_cast<T*>(smem_raw);
  T* stages = slots + NS * (L + 2) * stride;
  auto* bars = reinterpret_cast<unsigned long long*>(stages + L * stride);
  const PlaneRing<T, NS> ring{slots, bars, bars + NS, L + 2, stride, kb - 1};
  ring.init(L);
  __syncthreads();

  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const unsigned row_bytes = static_cast<unsigned>(nx * sizeof(T));
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  if (warp == L) {
    if (lane == 0) ring.produce(u + static_cast<std::size_t>(j0 - 1) * nx, nxy, nx, row_bytes, min(L + 2, ny - (j0 - 1)), ke);
    return;
  }
  // A warp past the grid reads nothing (its rows may not have been copied) and writes
  // nothing, but releases its planes.
  const int j = j0 + warp;
  const bool line = j <= ny - 2;
  T* stage = stages + warp * stride;
  const RowWeights<T> wx = w.w[0], wy = w.w[1], wz = w.w[2];
  const bool first_tile = j0 == 1, last_tile = j0 + L >= ny - 1;
  auto general_row = [&](int jr, int k) {
    for (int i = lane; i < nx; i += 32) general_node(op, u, f, g, scale, r, i, jr, k);
  };
  // The z-face rows of this tile in plane kz, with the corners where the tile is the first or
  // last (warps 0 and L-1: a last tile's warp L-1 is past the grid or on row ny-2).
  auto z_face_rows = [&](int kz) {
    if (line) general_row(j, kz);
    if (first_tile && warp == 0) general_row(0, kz);
    if (last_tile && warp == L - 1) general_row(ny - 1, kz);
  };
  if (shell && kb == 1) z_face_rows(0);
  ring.wait(kb - 1);
  ring.wait(kb);
  for (int k = kb; k < ke; ++k) {
    ring.wait(k + 1);
    if (line) {
      const std::size_t row = nxy * k + static_cast<std::size_t>(j) * nx;
      if (f && k + 1 < ke)
        for (int i = lane * (128 / sizeof(T)); i < nx; i += 32 * (128 / sizeof(T))) prefetch_l2(f + row + nxy + i);
      const T* sc = ring.plane(k) + (warp + 1) * stride;
      const T* sn = sc - stride;
      const T* ss = sc + stride;
      const T* sm = ring.plane(k - 1) + (warp + 1) * stride;
      const T* sp = ring.plane(k + 1) + (warp + 1) * stride;
      if (lane == 0) bulk_wait_read();  // the last store has read the staging row
      __syncwarp();
      for (int i = 1 + lane; i < nx - 1; i += 32) {
        const T cur = sc[i];
        T sum = T(0);
        sum += wx.wm * (sc[i - 1] - cur) + wx.wp * (sc[i + 1] - cur);
        sum += wy.wm * (sn[i] - cur) + wy.wp * (ss[i] - cur);
        sum += wz.wm * (sm[i] - cur) + wz.wp * (sp[i] - cur);
        stage[i] = scale * (f ? sum + f[row + i] : sum);  // finish_rhs of an interior node
      }
      // The row's x-face nodes: Dirichlet here (shell), else the shell kernel's.
      if (lane == 0 || lane == 31) stage[lane == 0 ? 0 : nx - 1] = T(0);
    }
    ring.release(k - 1);  // its proxy fence also puts the staging row before the bulk store
    __syncwarp();
    if (line && lane == 0) {
      bulk_store(r + nxy * k + static_cast<std::size_t>(j) * nx, stage, row_bytes);
      bulk_commit();
    }
    // The y-face rows of plane k, by turns among the line warps.
    if (shell && first_tile && warp == (k - kb) % L) general_row(0, k);
    if (shell && last_tile && warp == (k - kb + L / 2) % L) general_row(ny - 1, k);
  }
  if (shell && ke == nz - 1) z_face_rows(nz - 1);
  if (lane == 0) bulk_wait();
}

// The planes variant of L line warps where it applies (sm_90, rows of whole 16-byte units,
// u and r aligned, the slots within shared memory); false, launching nothing, elsewhere.
template <class T, int L, int NS = kPlanesSlots>
bool launch_planes(const OperatorView<T>& op, const InteriorWeights<T>& w, const T* u, const T* f,
                   const FacePtrs<T>& g, T scale, T* r, cudaStream_t s) {
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  if ((static_cast<std::size_t>(nx) * sizeof(T)) % 16 != 0 || !aligned16(u) || !aligned16(r)) return false;
  int device = 0, optin = 0, sms = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  auto kernel = planes_kernel<T, L, NS>;
  if (!bulk_copies_usable(reinterpret_cast<const void*>(kernel), device)) return false;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t smem = planes_smem_bytes<T, L, NS>(nx);
  if (smem > static_cast<std::size_t>(optin)) return false;
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * (L + 1), smem));
  const int tiles = (ny - 2 + L - 1) / L, planes = nz - 2;
  const int kseg = ring_planes_per_block(tiles, planes, std::max(1, per_sm) * sms);
  kernel<<<dim3(tiles, (planes + kseg - 1) / kseg), 32 * (L + 1), smem, s>>>(op, g, planes_row_stride<T>(nx), kseg,
                                                                             w, u, f, scale, r, planes_write_shell(op));
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}

// The planes variant with the lines per block chosen above (kPlanesWideLines where rows
// of kPlanesWideFrom values or more let it fit, else kPlanesLines); false as launch_planes.
template <class T>
bool launch_planes_chosen(const OperatorView<T>& op, const InteriorWeights<T>& w, const T* u, const T* f,
                          const FacePtrs<T>& g, T scale, T* r, cudaStream_t s) {
  return (op.n[0] >= kPlanesWideFrom && launch_planes<T, kPlanesWideLines>(op, w, u, f, g, scale, r, s)) ||
         launch_planes<T, kPlanesLines>(op, w, u, f, g, scale, r, s);
}

template <class T, bool kAlphaField>
void launch_pencil(StencilVariant v, const OperatorView<T>& op, const InteriorWeights<T>& w, const T* u,
                   const T* f, T scale, T* r, cudaStream_t s) {
  // Nodes covered per axis (see pencil_kernel: x whole, y and z from node 1).
  const int m[3] = {op.n[0], op.n[1] - 2, op.n[2] - 2};
  if (op.n[0] - 2 <= 0 || m[1] <= 0 || m[2] <= 0) return;
  const dim3 block(TX, TY);
  const dim3 grid((m[0] + TX - 1) / TX, (m[1] + TY - 1) / TY, (m[2] + KC - 1) / KC);
  switch (v) {
    case StencilVariant::zpencil:
      pencil_kernel<T, Pencil::registers, kAlphaField><<<grid, block, 0, s>>>(op, w, u, f, scale, r);
      break;
    case StencilVariant::zpencil_smem:
      pencil_kernel<T, Pencil::smem, kAlphaField><<<grid, block, 0, s>>>(op, w, u, f, scale, r);
      break;
    default:
      if constexpr (kAlphaField)
        if (op.material) {
          pencil_kernel<T, Pencil::shuffle, true, true><<<grid, block, 0, s>>>(op, w, u, f, scale, r);
          break;
        }
      pencil_kernel<T, Pencil::shuffle, kAlphaField><<<grid, block, 0, s>>>(op, w, u, f, scale, r);
      break;
  }
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_naive(const OperatorView<T>& op, const T* u, const T* f, const FacePtrs<T>& g, T scale, T* r,
                  cudaStream_t s) {
  const dim3 block(TX, TY);
  const unsigned gx = (op.n[0] + TX - 1) / TX, gy = (op.n[1] + TY - 1) / TY;
  const unsigned gz = static_cast<unsigned>(op.n[2] < 65535 ? op.n[2] : 65535);
  if (op.alpha_field)
    naive_kernel<T, false><<<dim3(gx, gy, gz), block, 0, s>>>(op, u, f, g, scale, r);
  else
    naive_kernel<T, true><<<dim3(gx, gy, gz), block, 0, s>>>(op, u, f, g, scale, r);
  ADI3D_CUDA_LAUNCH_CHECK();
}

}  // namespace

template <class T>
StencilVariant launch_operator_rhs(StencilVariant v, const OperatorView<T>& op, const T* u, const T* f,
                                   const FacePtrs<T>& g, T scale, T* r, cudaStream_t s) {
  const StencilVariant pencil = v == StencilVariant::planes ? StencilVariant::shuffle : v;
  if (op.n[0] <= 0 || op.n[1] <= 0 || op.n[2] <= 0) return pencil;
  if (v == StencilVariant::naive) {
    launch_naive(op, u, f, g, scale, r, s);
    return v;
  }
  InteriorWeights<T> w{};
  for (int a = 0; a < 3; ++a)
    w.w[a] = row_weights(RowKind::interior, op.alpha[a], op.alpha[a], op.alpha[a], op.inv_h2[a]);
  // The planes variant where it applies, else the shuffle variant. With an alpha field,
  // the variable x pass's kernel without its solve (launch_var_planes_stencil: lanes on
  // chunks of a row, the z faces carried from plane to plane). (An earlier planes variant
  // for alpha fields, lanes on consecutive nodes and both z-face weights made per node,
  // ran slower than the shuffle variant at 512^3 on an H100: 1.009 against 0.770 ms
  // float, 1.447 against 1.347 double.)
  const bool interior = op.n[0] > 2 && op.n[1] > 2 && op.n[2] > 2;
  bool planes = false;
  if (op.alpha_field) {
    if (!(planes = v == StencilVariant::planes && interior && launch_var_planes_stencil(op, u, f, scale, r, s)))
      launch_pencil<T, true>(pencil, op, w, u, f, scale, r, s);
  } else if (!(planes = v == StencilVariant::planes && interior && launch_planes_chosen(op, w, u, f, g, scale, r, s))) {
    launch_pencil<T, false>(pencil, op, w, u, f, scale, r, s);
  }
  const StencilVariant ran = planes ? StencilVariant::planes : pencil;
  if (planes && !op.alpha_field && planes_write_shell(op)) return ran;
  const int runs = shell_runs(op.n);
  const unsigned blocks = static_cast<unsigned>(std::min(runs, 65535));
  if (op.alpha_field)
    shell_kernel<T, false><<<blocks, kShellThreads, 0, s>>>(op, u, f, g, scale, r, runs);
  else
    shell_kernel<T, true><<<blocks, kShellThreads, 0, s>>>(op, u, f, g, scale, r, runs);
  ADI3D_CUDA_LAUNCH_CHECK();
  return ran;
}

template <class T>
void launch_fold_neumann_terms(const OperatorView<T>& op, const T* base, const FacePtrs<T>& g, T* f, cudaStream_t s) {
  const unsigned faces = neumann_data_faces(op, g.g);
  for (int face = 0; face < 6; ++face) {
    if (!((faces >> face) & 1u)) continue;
    const FaceAxes fa = face_axes(face);
    const std::size_t count = static_cast<std::size_t>(op.n[fa.u]) * op.n[fa.v];
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kShellThreads - 1) / kShellThreads, 65535));
    if (blocks == 0) continue;
    fold_face_kernel<T><<<blocks, kShellThreads, 0, s>>>(op, faces, face, base, g, f);
    ADI3D_CUDA_LAUNCH_CHECK();
  }
}
template void launch_fold_neumann_terms<float>(const OperatorView<float>&, const float*, const FacePtrs<float>&,
                                               float*, cudaStream_t);
template void launch_fold_neumann_terms<double>(const OperatorView<double>&, const double*, const FacePtrs<double>&,
                                                double*, cudaStream_t);

template <class T>
bool planes_stencil_usable(int device) {
  return bulk_copies_usable(reinterpret_cast<const void*>(planes_kernel<T, kPlanesLines, kPlanesSlots>),
                            device);
}
template bool planes_stencil_usable<float>(int);
template bool planes_stencil_usable<double>(int);

template StencilVariant launch_operator_rhs<float>(StencilVariant, const OperatorView<float>&, const float*,
                                                   const float*, const FacePtrs<float>&, float, float*, cudaStream_t);
template StencilVariant launch_operator_rhs<double>(StencilVariant, const OperatorView<double>&, const double*,
                                                    const double*, const FacePtrs<double>&, double, double*,
                                                    cudaStream_t);

}  // namespace adi3d::cuda
