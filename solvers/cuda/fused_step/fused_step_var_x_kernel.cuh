#pragma once
// Pass x of the fused variable step (fused_step_var.cu):
//   d = (I - tau Ax)^-1 dt (A u + f)
// formed and solved in one kernel, as the constant step's bulk x pass
// (fused_step_kernels.cuh, x_pass_bulk_kernel): a block of L line warps and a producer
// warp takes slabs of rows j0..j0+L-1 over groups of planes; the producer streams each
// plane's L+2 rows of u and of the coefficients (the material bytes, or alpha) through one
// PlaneRing (plane_ring.cuh; the two arrays' slots share its barriers); line warp w forms
// the rhs of row j0+w of plane k on its lane's chunk of C rows from planes k-1..k+1, the
// face weights looked up in the material tables (in shared memory) or made from alpha
// (harmonic means), solves the line by warp_solve_var (the y/z tiles' partition solve:
// each line has rows of its own) and stores it from a staging row by one bulk copy. u and
// the coefficients come from DRAM once, and d goes out once: 2 arrays and a byte per
// point (3 arrays with alpha), against 4 and two bytes (6 arrays) for the stencil and the
// x solve apart. Internal to the CUDA backend.
//
// kSolve = false: the same kernel without the solve is the planes stencil of a variable
// operator, r = dt (A u + f) on the interior nodes (launch_operator_rhs; the shell kernel
// writes the rest): 2 arrays and a byte per point, or 3 with alpha, against the shuffle
// stencil's registers and halos.
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_limits.cuh"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_var_kernels.cuh"
#include "solvers/cuda/common/plane_ring.cuh"
#include "solvers/cuda/common/plane_split.hpp"
#include "solvers/cuda/common/slot_bytes.cuh"
#include "solvers/material_index.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace adi3d::cuda::fused {

template <class T>
struct VarXArgs {
  int n[3];
  T inv_h2[3];
  T dt, tau;
  const T* u;
  const T* f;  // source or null
  T* d;
  const T* alpha;  // node diffusivity (the alpha-field kernel)
  const std::uint8_t* material;
  const T* material_face_mean;
  int material_pitch;  // bytes per row of the index (a multiple of 32)
  int material_count;
  PlaneTasks tasks;  // the blocks' share of the (slab, plane) units
  int unknown_faces;  // (kNeumann) bit face_index, as VarPassArgs
  RobinEnds<T> robin;  // (kNeumann) as VarPassArgs
};

// The ring's slots of u, and of alpha one fewer: a plane's alpha is read for the last time
// while it is plane k (its faces above carry over to plane k+1), its u while it is plane
// k-1, so plane p's alpha may overwrite plane p-3's once plane p-4's u is released
// (PlaneRing::claim). Two exceptions: a task's first plane is read before (its faces, to
// the plane below the task's first solved one), so the last task's last plane is released
// only after that; the block's first plane has no plane p-4, so the fourth waits for the
// first's release itself. The 26 KB this frees made room for a fifth line warp in double
// (lines of up to 520 nodes) and an eleventh in float. The material bytes keep a slot per
// plane of u: a slot is a few KB, and no more line warps would fit for it.
constexpr int kVarXSlots = 4;
template <bool kMaterial>
constexpr int kVarXCoefSlots = kMaterial ? kVarXSlots : kVarXSlots - 1;

// Values per slot row of u or alpha: a lane reads C + 1 values past its chunk's first node,
// and a lane whose chunk lies past the line reads from the line's last node instead
// (var_x_pass_kernel), so a row needs room for nx + C values, or for the 32 C + 2 of the
// whole chunks where that is fewer (512-node rows in chunks of 17: 530 values, not 546).
template <class T, int C>
constexpr int var_x_row_stride(int nx) {
  constexpr int V = 16 / sizeof(T);
  const int past = (nx + C + V - 1) / V * V;
  const int whole = x_row_stride<T, C>(nx);
  return past < whole ? past : whole;
}

// A material slot row in shared memory: the index's row and room past it for the lanes'
// word loads (SlotBytes: up to byte 32 C + 8 of a row), so that no lane reads into the
// next row, or the next slot, which the producer may be filling. Zeroed once.
template <int C>
constexpr int var_x_material_stride(int material_pitch) {
  const int m = material_pitch > 32 * C + 16 ? material_pitch : 32 * C + 16;
  return (m + 15) / 16 * 16;
}

// The face tables in shared memory, each of the face means times a factor that the kernel
// would otherwise multiply by: the rhs's x, y and z weights (inv_h2 of the axis), the x
// solve's (tau inv_h2[0]). The products round as they did when made per face, and 5 C + 1
// multiplies a lane and plane go (H100, 512^3 float: a sixth of the kernel's instructions
// were FP32 multiplies). Each has room for kMaxMaterials^2 values, so that the four lie a
// constant distance apart, and rows of the materials in use (CompactTable).
enum VarXTable { kRhsX, kRhsY, kRhsZ, kSolveX, kVarXTables };
constexpr int kVarXTableSize = kMaxMaterials * kMaxMaterials;

// The coefficients the pass streams beside u: the material bytes (kMaterial), whose faces
// come from the tables, or alpha, whose faces it makes (harmonic means). Bytes per slot
// row, and of the tables.
template <class T, int C, bool kMaterial>
constexpr int var_x_coef_stride(int nx, int material_pitch) {
  return kMaterial ? var_x_material_stride<C>(material_pitch) : var_x_row_stride<T, C>(nx) * static_cast<int>(sizeof(T));
}
template <class T, bool kMaterial>
constexpr std::size_t kVarXTableBytes = kMaterial ? kVarXTables * kVarXTableSize * sizeof(T) : 0;

// Shared memory: the face tables (kMaterial), kVarXCoefSlots coefficient slots of L+2
// rows, kVarXSlots slots of u of L+2 rows of var_x_row_stride, L staging rows, the ring's
// 2 kVarXSlots barriers.
template <class T, int L, int C, bool kMaterial>
constexpr std::size_t var_x_smem_bytes(int nx, int material_pitch) {
  constexpr int NS = kVarXSlots;
  return kVarXTableBytes<T, kMaterial> +
         static_cast<std::size_t>(kVarXCoefSlots<kMaterial>) * (L + 2) *
             var_x_coef_stride<T, C, kMaterial>(nx, material_pitch) +
         (static_cast<std::size_t>(NS) * (L + 2) + L) * var_x_row_stride<T, C>(nx) * sizeof(T) +
         2 * NS * sizeof(unsigned long long);
}
// Whether lines of nx nodes fit the largest opt-in shared memory of a block (227 KiB,
// sm_90). The kernels of blocks whose slots exceed it for the chunk's longest lines are not
// built, but where var_x_lines_long takes those lines (then: for its shortest ones).
template <class T, int L, int C, bool kMaterial>
constexpr bool var_x_fits(int nx) {
  return var_x_smem_bytes<T, L, C, kMaterial>(
             nx, (nx + kMaterialRowAlign - 1) / kMaterialRowAlign * kMaterialRowAlign) <= 227 * 1024;
}

// The face tables with rows of the materials in use (not kMaxMaterials): the lookups of a
// few materials then fall in distinct banks (at 16 a row, the entries of 5 materials shared
// 10 banks). (The y/z tiles kept rows of 16: there it measured no faster.)
struct CompactTable {
  int pitch;
  __device__ __forceinline__ int at(int a, int b) const { return a * pitch + b; }
};
// Every thread of the block; a barrier before use. scale[t]: table t's factor.
template <class T>
__device__ __forceinline__ void load_var_x_tables(T* tables, const T* face_mean, int count, const T (&scale)[kVarXTables],
                                                  int tid, int threads) {
  for (int e = tid; e < count * count; e += threads) {
    const T mean = face_mean[(e / count) * kMaxMaterials + e % count];
#pragma unroll
    for (int t = 0; t < kVarXTables; ++t) tables[t * kVarXTableSize + e] = mean * scale[t];
  }
}

// Row sum of the 7-point operator at s (u there: uc; the x and y neighbours beside it in
// the slot, rows stride apart; pm / pp: the planes below and above), weights w*, in
// apply_operator's order, so that the sums round as the stencil's. kNeumann: a Neumann x
// face's end node (mirror_lo: the line's first, mirror_hi: its last) takes its ghost's u
// from the mirror, the node inside.
template <class T, bool kNeumann = false>
__device__ __forceinline__ T seven_point_row(const T* s, T uc, int stride, T pm, T pp, T wxm, T wxp, T wym, T wyp,
                                             T wzm, T wzp, bool mirror_lo = false, bool mirror_hi = false) {
  T left = s[-1], right = s[1];
  if (kNeumann) {
    left = mirror_lo ? right : left;
    right = mirror_hi ? left : right;
  }
  T sum = wxm * (left - uc) + wxp * (right - uc);
  sum += wym * (s[-stride] - uc) + wyp * (s[stride] - uc);
  sum += wzm * (pm - uc) + wzp * (pp - uc);
  return sum;
}

// A lane's rows of an x line at a Neumann x face (kNeumann): its chunk's row 0 is the
// line's first node, behind a Neumann face (lo: lane 0 only), or a row the last, before one
// (hi_row: that row's bit). A bit, not a row index: with the index, the compiler made each
// unrolled loop that touches that one row a store at a run-time index (x_mean[hi_q + 1] =
// x_mean[hi_q]), and moved the whole array to local memory (the float pass by material
// index, 15 lines of 17-row chunks: 84 bytes of spills at its 128 registers).
struct XLineEnds {
  bool lo;
  unsigned long long hi_row;  // (rows 0..32)
  // The same ends, opaque to the compiler: taken anew in each plane's loop, so that it
  // makes each row's tests there rather than hoisting them out of the loop, where they
  // held registers across it (the float pass by index, 7 lines: 223 registers against the
  // Dirichlet pass's 167, 179 taken anew).
  __device__ __forceinline__ XLineEnds opaque() const {
    XLineEnds e = *this;
    unsigned lo_word = e.lo;
    asm volatile("" : "+r"(lo_word), "+l"(e.hi_row));
    e.lo = lo_word != 0;
    return e;
  }
  __device__ __forceinline__ bool hi(int q) const { return (hi_row >> q) & 1u; }
  __device__ __forceinline__ bool end_row(int q) const { return (q == 0 && lo) || hi(q); }
  // Face q of the chunk (between rows q-1 and q) is an end row's ghost face.
  __device__ __forceinline__ bool ghost_face(int q) const { return q == 0 ? lo : hi(q - 1); }
};

// The x faces of a lane's chunk (face q between rows q-1 and q) at a Neumann x face's end
// node: the ghost's face takes its mirror's, the face inside, as its u does (the half-cell
// balance of discretization.hpp: the two faces' weights equal, to the rounding of the
// mean).
template <int C, class F>
__device__ __forceinline__ void mirror_end_faces(F (&x_face)[C + 1], XLineEnds e) {
  x_face[0] = e.lo ? x_face[1] : x_face[0];
#pragma unroll
  for (int q = 0; q < C; ++q) x_face[q + 1] = e.hi(q) ? x_face[q] : x_face[q + 1];
}

// A u and the faces on this lane's C rows of an x line, with materials: sc / mc point at
// the lane's first row (node 1 + lane C) of line j in plane k, in the u and material
// slots; the rows beside it are a slot row (stride, mstride) apart, the planes beside it
// in their slots at the same offsets (pm / pp: u, qp: materials of plane k+1). z_face:
// on entry the weights of the faces below the rows (to plane k-1: the last plane's faces
// above), on return those above (to plane k+1). x_face[q] on return: the tables' entry of
// the x face between rows q-1 and q of the chunk (q = 0..C), for the solve's weights.
// kNeumann: e says which rows are a Neumann x face's end nodes (XLineEnds),
// whose ghost's face and u are their mirrors' (a Dirichlet face's end node is not a row).
template <class T, int C, bool kNeumann = false>
__device__ __forceinline__ void material_operator_rows(T (&v)[C], int (&x_face)[C + 1], T (&z_face)[C], const T* tables,
                                                       CompactTable tab, const T* sc, const T* pm, const T* pp,
                                                       int stride, const unsigned char* mc, const unsigned char* qp,
                                                       int mstride, XLineEnds e = {}) {
  const T* wx = tables + kRhsX * kVarXTableSize;
  const T* wy = tables + kRhsY * kVarXTableSize;
  const T* wz = tables + kRhsZ * kVarXTableSize;
  const SlotBytes<C + 2> line(mc - 1);  // rows -1 .. C: byte q + 1 is row q
  const SlotBytes<C> south(mc - mstride), north(mc + mstride), above(qp);
#pragma unroll
  for (int q = 0; q <= C; ++q) x_face[q] = tab.at(line[q], line[q + 1]);
  if (kNeumann) mirror_end_faces<C>(x_face, e);
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const int m = line[q + 1];
    const T z_up = wz[tab.at(m, above[q])];
    v[q] = seven_point_row<T, kNeumann>(sc + q, sc[q], stride, pm[q], pp[q], wx[x_face[q]], wx[x_face[q + 1]],
                                        wy[tab.at(south[q], m)], wy[tab.at(m, north[q])], z_face[q], z_up,
                                        q == 0 && e.lo, e.hi(q));
    z_face[q] = z_up;
  }
}

// The same with alpha: ac points at alpha of the lane's first row in plane k's slot (the
// rows beside it stride apart), ap at plane k+1's; z_face as above (h[2] times the means);
// x_mean[q] on return: the harmonic mean of the x face between rows q-1 and q; kNeumann
// and e as above.
template <class T, int C, bool kNeumann = false>
__device__ __forceinline__ void alpha_operator_rows(T (&v)[C], T (&x_mean)[C + 1], T (&z_face)[C], const T* sc,
                                                    const T* pm, const T* pp, int stride, const T* ac, const T* ap,
                                                    const T (&h)[3], XLineEnds e = {}) {
#pragma unroll
  for (int q = 0; q <= C; ++q) x_mean[q] = harmonic_mean_fast(ac[q - 1], ac[q]);
  if (kNeumann) mirror_end_faces<C>(x_mean, e);
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T a = ac[q];
    const T z_up = harmonic_mean_fast(a, ap[q]) * h[2];
    v[q] = seven_point_row<T, kNeumann>(sc + q, sc[q], stride, pm[q], pp[q], x_mean[q] * h[0], x_mean[q + 1] * h[0],
                                        harmonic_mean_fast(ac[q - stride], a) * h[1],
                                        harmonic_mean_fast(a, ac[q + stride]) * h[1], z_face[q], z_up, q == 0 && e.lo,
                                        e.hi(q));
    z_face[q] = z_up;
  }
}

// Line warps per block: with the producer, 16 or 8 warps, 4 or 2 per scheduler, so that
// each may hold 128 or 255 registers (17 warps, at 16 lines, left 96: the float solve of
// 17-row chunks spilled). By index, 15 lines where the slots fit (float lines of up to 546
// nodes), else 7 (float 512^3 with 7: x pass 0.66 -> 0.80 ms; the warps, not the
// registers, hide the solve's chains). From alpha (4 bytes a node beside u, not 1), the
// most whose slots fit: 11 (float, lines of up to 546 nodes), 9 (double, up to 290), 5
// (double, up to 520; var_x_lines_long: 4 up to 546), 3 (double, up to 674), else 7
// (float, up to 802). H100, bench gpu, A/B in one run:
//  - 512^3 double, the one kernel of 4 lines against the two kernels: the step 5.64 ->
//    4.90 ms, and the alpha stencil took the planes kernel, 1.35 -> 1.29 (the shuffle
//    stencil before); 640^3 with 3 lines, the step 12.99 -> 12.40 ms.
//  - 512^3, with 3 slots of alpha: 5 lines against 4, the double step 5.03 -> 4.90 ms; 11
//    against 10, the float step 2.16 -> 2.12, but the float stencil 0.621 -> 0.630, so
//    it keeps 10. 768^3 float (ncu): the one kernel of 7 lines 3.60 ms, where the
//    shuffle stencil and the x solve took 5.17.
// 0: none; so for the double planes stencil (kSolve false) of 3, which ran slower than
// the shuffle stencil (640^3: 2.935 against 2.617 ms).
template <class T, int C, bool kMaterial, bool kSolve>
constexpr int var_x_lines() {
  if constexpr (kMaterial) return sizeof(T) == 4 && C <= 17 ? 15 : 7;
  if constexpr (sizeof(T) == 8) return C <= 9 ? 9 : C <= 17 ? 5 : C <= 21 ? (kSolve ? 3 : 0) : 7;
  return C <= 17 ? (kSolve ? 11 : 10) : 7;
}
// The lines per block where var_x_lines' slots exceed shared memory for the longest lines
// of the chunk.
template <class T, int C, bool kMaterial, bool kSolve>
constexpr int var_x_lines_long() {
  constexpr int L = var_x_lines<T, C, kMaterial, kSolve>();
  return !kMaterial && sizeof(T) == 8 && C > 9 && C <= 17 ? L - 1 : L;
}

// Persistent blocks (gridDim.x of them): each takes its turns of the aligned tasks
// (plane_tasks: a slab over a group of planes) and streams them through one ring.
// kNeumann (kSolve): a face is Neumann (a.unknown_faces). The lines, planes and nodes
// solved are then the unknowns (first_of, last_of); a slab's rows and planes past a
// Neumann face are its ghosts, streamed from their mirrors (mirror_node), u and the
// coefficients alike, so that the ghost faces' weights are their mirrors'; the x ends
// mirror theirs in registers (mirror_end_faces). Every row at a Neumann face is solved
// halved, as the y and z tiles solve theirs: the x end rows here, and the rows of lines on
// a Neumann y or z face in the rhs (ends_scale; the x solve is linear).
template <class T, int L, int C, bool kMaterial, bool kSolve = true, bool kNeumann = false>
__global__ void __launch_bounds__(32 * (L + 1), 1) var_x_pass_kernel(VarXArgs<T> a) {
  static_assert(kSolve || !kNeumann, "the planes stencil takes the interior nodes");
  constexpr int NS = kVarXSlots, NC = kVarXCoefSlots<kMaterial>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int stride = var_x_row_stride<T, C>(nx);
  const int cstride = var_x_coef_stride<T, C, kMaterial>(nx, a.material_pitch);  // bytes
  const long long tasks = a.tasks.count();
  if (blockIdx.x >= tasks) return;
  const int tid = threadIdx.x;
  constexpr int kThreads = 32 * (L + 1);

  // Layout (var_x_smem_bytes); everything zeroed once: rows past the grid are never
  // copied (a later task's slab may leave the rows of an earlier one there: they feed
  // only the warps past the grid), and a staging row's nodes 0 and nx-1 stay 0 (zero
  // increments on the x faces).
  T* tables = reinterpret_cast<T*>(smem_raw);
  unsigned char* cslots = smem_raw + kVarXTableBytes<T, kMaterial>;
  T* uslots = reinterpret_cast<T*>(cslots + static_cast<std::size_t>(NC) * (L + 2) * cstride);
  T* stages = uslots + NS * (L + 2) * stride;
  auto* bars = reinterpret_cast<unsigned long long*>(stages + L * stride);
  PlaneRing<T, NS> ring{uslots, bars, bars + NS, L + 2, stride, 0};
  const CompactTable tab{a.material_count};
  if constexpr (kMaterial) {
    const T scale[kVarXTables] = {a.inv_h2[0], a.inv_h2[1], a.inv_h2[2], a.tau * a.inv_h2[0]};
    load_var_x_tables(tables, a.material_face_mean, a.material_count, scale, tid, kThreads);
  }
  {
    auto* words = reinterpret_cast<unsigned*>(cslots);
    const int n_words = static_cast<int>((reinterpret_cast<unsigned char*>(bars) - cslots) / sizeof(unsigned));
    for (int e = tid; e < n_words; e += kThreads) words[e] = 0u;
  }
  fence_proxy_async();  // the zeros before the bulk loads that overwrite them
  ring.init(L);
  __syncthreads();

  const int warp = tid / 32, lane = tid & 31;
  const unsigned row_bytes = static_cast<unsigned>(nx * sizeof(T));
  const unsigned crow_bytes = kMaterial ? static_cast<unsigned>(a.material_pitch) : row_bytes;
  const int first0 = first_of<kNeumann>(a, 0), last0 = last_of<kNeumann>(a, 0);
  const int lane_row = first0 + lane * C;         // this lane's first node
  const int lim = (last0 - first0 + 1) - lane * C;  // rows of this lane's chunk inside the line
  const XLineEnds x_ends{kNeumann && lane == 0 && first0 == 0,
                         kNeumann && last0 == nx - 1 && lim >= 1 && lim <= C ? 1ull << (lim - 1) : 0ull};
  // Where the lane reads its rows: a chunk past the line (lim <= 0) reads the line's end,
  // and discards what it makes, so that slot rows need no room for it (var_x_row_stride);
  // from a multiple of 32 nodes back, so that its reads keep their banks (clamped to node
  // nx-1, the last lane's fell in another lane's: 768^3 float, H100, the material stencil
  // 1.585 -> 1.64 ms).
  const int read_row =
      lane_row <= nx - 1 ? lane_row : max(1, lane_row - (lane_row - (nx - 1) + 31) / 32 * 32);
  T* stage = stages + warp * stride;
  const T* solve_x = tables + kSolveX * kVarXTableSize;
  const T h[3] = {a.inv_h2[0], a.inv_h2[1], a.inv_h2[2]};
  const T tw = a.tau * a.inv_h2[0];
  auto coef_slot = [&](int p) {
    return cslots + static_cast<std::size_t>((p - ring.first) % NC) * (L + 2) * cstride;
  };
  // This lane's first row of line warp + 1 in plane k's coefficient slot.
  auto cslot = [&](int k) {
    return coef_slot(k) + (warp + 1) * cstride + read_row * (kMaterial ? 1 : static_cast<int>(sizeof(T)));
  };
  auto aslot = [&](int k) { return reinterpret_cast<const T*>(cslot(k)); };
  int streamed = 0;  // planes through the ring so far
  for (long long task = blockIdx.x; task < tasks; task += gridDim.x) {
    const PlaneSegment seg = a.tasks.segment(task);
    // planes kb..ke-1 are solved (the segment's count from 1)
    const int j0 = first_of<kNeumann>(a, 1) + seg.slab * L, kb = seg.kb - 1 + first_of<kNeumann>(a, 2),
              ke = seg.ke - 1 + first_of<kNeumann>(a, 2);
    ring.first = kb - 1 - streamed;  // the ring's sequence goes on from task to task
    streamed += ke - kb + 2;
    if (warp == L) {
      // The producer lane: both arrays' rows of plane p on the plane's one full barrier.
      if (lane == 0) {
        const int rows = min(L + 2, last_of<kNeumann>(a, 1) + 2 - (j0 - 1));
        for (int p = kb - 1; p <= ke; ++p) {
          // With fewer alpha slots, the block's fourth plane takes the first plane's, which
          // the claim (plane p-4 released) does not wait for: its release, as for later planes.
          if constexpr (NC < NS)
            if (p - ring.first == NC) mbarrier_wait(ring.empty + ring.slot_of(p - NC), 0u);
          const int slot = ring.claim(p, rows * (row_bytes + crow_bytes));
          T* udst = uslots + static_cast<std::size_t>(slot) * (L + 2) * stride;
          unsigned char* cdst = coef_slot(p);
          for (int r = 0; r < rows; ++r) {
            // The grid row (of planes ny rows) of the slab's row r in plane p.
            const std::size_t src_row =
                kNeumann ? static_cast<std::size_t>(mirror_node(p, nz)) * ny + mirror_node(j0 - 1 + r, ny)
                         : static_cast<std::size_t>(p) * ny + (j0 - 1 + r);
            bulk_load(udst + static_cast<std::size_t>(r) * stride, a.u + src_row * nx, row_bytes, ring.full + slot);
            const void* csrc = kMaterial ? static_cast<const void*>(a.material + src_row * crow_bytes)
                                         : static_cast<const void*>(a.alpha + src_row * nx);
            bulk_load(cdst + static_cast<std::size_t>(r) * cstride, csrc, crow_bytes, ring.full + slot);
          }
        }
      }
      continue;
    }

    const int j = j0 + warp;
    const bool line = j <= last_of<kNeumann>(a, 1);  // warps past the grid solve garbage and store nothing
    auto uslot = [&](int k) { return ring.plane(k) + (warp + 1) * stride + read_row; };
    ring.wait(kb - 1);
    ring.wait(kb);
    // The faces below the task's first plane's rows; then each plane's faces above
    // carry over.
    T z_face[C];
    if constexpr (kMaterial) {
      const SlotBytes<C> below(cslot(kb - 1)), here(cslot(kb));
#pragma unroll
      for (int q = 0; q < C; ++q) z_face[q] = tables[kRhsZ * kVarXTableSize + tab.at(below[q], here[q])];
    } else {
      const T *below = aslot(kb - 1), *here = aslot(kb);
#pragma unroll
      for (int q = 0; q < C; ++q) z_face[q] = harmonic_mean_fast(below[q], here[q]) * h[2];
    }
    // With fewer alpha slots, the last task's last plane is held until now: its release
    // lets the producer put this task's fourth plane in the alpha slot just read.
    if constexpr (NC < NS)
      if (task != blockIdx.x) ring.release(kb - 2);
    for (int k = kb; k < ke; ++k) {
      const XLineEnds ends = x_ends.opaque();
      ring.wait(k + 1);
      const std::size_t row = nxy * k + static_cast<std::size_t>(j) * nx;
      if (a.f && line && k + 1 < ke)
        for (int i = lane * (128 / sizeof(T)); i < nx; i += 32 * (128 / sizeof(T))) prefetch_l2(a.f + row + nxy + i);
      T v[C];
      std::conditional_t<kMaterial, int, T> x_face[C + 1];  // table entries, or means
      if constexpr (kMaterial)
        material_operator_rows<T, C, kNeumann>(v, x_face, z_face, tables, tab, uslot(k), uslot(k - 1), uslot(k + 1),
                                               stride, cslot(k), cslot(k + 1), cstride, ends);
      else
        alpha_operator_rows<T, C, kNeumann>(v, x_face, z_face, uslot(k), uslot(k - 1), uslot(k + 1), stride, aslot(k),
                                            aslot(k + 1), h, ends);
      // Plane k-1 is done with (this warp's last read of it); the staging row is free once
      // the last store has read it.
      ring.release(k - 1);
      if (lane == 0) bulk_wait_read();
      __syncwarp();
      const T dt = kNeumann ? a.dt * T(ends_scale<false>(a, j, k)) : a.dt;
      // The Robin x faces' terms of the line's end rows, taken before the solve: inside it,
      // their loads and branches cost the insulated float pass of 512^3 5% and the double 11%.
      T robin_lo = T(0), robin_hi = T(0);
      if constexpr (kNeumann) {
        const std::size_t robin_entry = line ? static_cast<std::size_t>(k) * ny + j : 0;  // (past the grid: 0)
        robin_lo = a.robin.template term<0>(a.tau, robin_entry);
        robin_hi = a.robin.template term<1>(a.tau, robin_entry);
      }
      if (a.f)
        finish_rhs_rows<T, C, true>(v, stage, a.f, row, first0, last0, line, dt, read_row);
      else
        finish_rhs_rows<T, C, false>(v, stage, a.f, row, first0, last0, line, dt, read_row);
      if (kNeumann)
#pragma unroll
        for (int q = 0; q < C; ++q) v[q] = ends.end_row(q) ? v[q] * T(0.5) : v[q];
      if constexpr (kSolve)
        warp_solve_var<T, C>(
            v,
            [&](int q) {
              T w;
              if constexpr (kMaterial)
                w = solve_x[x_face[q]];
              else
                w = tw * x_face[q];
              // A Neumann end row's outer face (its ghost's) has no weight in the halved row.
              return kNeumann && ends.ghost_face(q) ? T(0) : w;
            },
            [&](int q) { return kNeumann && ends.end_row(q) ? T(0.5) + (q == 0 && ends.lo ? robin_lo : robin_hi) : T(1); },
            lim);
      // A chunk past the line read f from other lanes' rows, which they now overwrite.
      __syncwarp();
      T* out = stage + lane_row;
#pragma unroll
      for (int q = 0; q < C; ++q)
        if (q < lim) out[q] = v[q];
      fence_proxy_async();
      __syncwarp();
      if (line && lane == 0) {
        bulk_store(a.d + row, stage, row_bytes);
        bulk_commit();
      }
    }
    ring.release(ke - 1);  // read for the last time by the task's last plane
    if constexpr (NC == NS) ring.release(ke);  // else once the next task has made its faces below
  }
  if (warp < L && lane == 0) bulk_wait();
}

// var_x_pass_kernel in blocks of L line warps; false (nothing launched) where its shared
// memory exceeds optin or bulk copies are not usable.
template <class T, int L, int C, bool kMaterial, bool kSolve, bool kNeumann>
bool launch_var_x_lines(const VarXArgs<T>& args, int device, const DeviceLimits& limits, cudaStream_t s) {
  auto kernel = var_x_pass_kernel<T, L, C, kMaterial, kSolve, kNeumann>;
  const std::size_t smem = var_x_smem_bytes<T, L, C, kMaterial>(args.n[0], args.material_pitch);
  if (smem > static_cast<std::size_t>(limits.optin) || !bulk_copies_usable(reinterpret_cast<const void*>(kernel), device))
    return false;
  const int per_sm = blocks_per_sm(kernel, smem, 32 * (L + 1), limits);
  if (per_sm < 1) return false;
  // Persistent blocks on aligned tasks (plane_tasks), at most one wave.
  VarXArgs<T> a = args;
  const int lines = last_unknown_of(args, 1) - first_unknown_of(args, 1) + 1;
  a.tasks = plane_tasks((lines + L - 1) / L, last_unknown_of(args, 2) - first_unknown_of(args, 2) + 1,
                        per_sm * limits.sms);
  kernel<<<a.tasks.blocks, 32 * (L + 1), smem, s>>>(a);
  ADI3D_CUDA_LAUNCH_CHECK();
  return true;
}

// var_x_pass_kernel over op's interior where it applies (by the material index where there
// is one, else from alpha), dt (A u + f) into d, solved along x (kSolve; tau) or not; false
// elsewhere (rows of u not whole 16-byte units, unaligned arrays, lines the warp solve
// does not take, slots beyond shared memory: by index, double lines of more than 546
// nodes; from alpha, float lines of more than 802, double of more than 674).
// unknown_faces (kSolve; bit face_index): the Neumann faces of the fused step, whose nodes
// are unknowns too, their rows halved (the fused y and z passes take the rhs so). 0: the
// interior, between Dirichlet faces (or the planes stencil's, whatever op's faces).
template <class T, bool kSolve>
bool launch_var_x(const OperatorView<T>& op, const T* u, const T* f, T dt, T tau, T* d, int device,
                  const DeviceLimits& limits, cudaStream_t s, int unknown_faces = 0) {
  const int nx = op.n[0];
  if (nx < 3 || op.n[1] < 3 || op.n[2] < 3 || (!kSolve && unknown_faces)) return false;
  VarXArgs<T> a{};
  a.unknown_faces = unknown_faces;
  take_operator(a, op);
  const int cap = chunk_cap(last_unknown_of(a, 0) - first_unknown_of(a, 0) + 3);
  const bool material = op.material != nullptr;
  const bool rows_aligned = (static_cast<std::size_t>(nx) * sizeof(T)) % 16 == 0 && aligned16(u) && aligned16(d) &&
                            (!f || aligned16(f)) &&
                            (material ? aligned16(op.material) && op.material_pitch % 16 == 0
                                      : aligned16(op.alpha_field));
  if ((material && (op.material_count < 1 || op.material_count > kMaxMaterials)) || (!material && !op.alpha_field) ||
      cap == 0 || !rows_aligned)
    return false;
  a.material_count = op.material_count;
  a.alpha = op.alpha_field;
  a.dt = dt;
  a.tau = tau;
  a.u = u;
  a.f = f;
  a.d = d;
  auto launch = [&](auto kind, auto neumann) {
    constexpr bool kMaterial = decltype(kind)::value, kNeumann = decltype(neumann)::value;
    return with_chunk_cap(cap, [&](auto C) {
      constexpr int c = C.value;
      constexpr int L = var_x_lines<T, c, kMaterial, kSolve>();
      constexpr int L_long = var_x_lines_long<T, c, kMaterial, kSolve>();
      constexpr int longest = 32 * c + 2;
      bool launched = false;
      if constexpr (L > 0 && var_x_fits<T, L, c, kMaterial>(L_long != L ? chunk_shortest_line(c) : longest))
        launched = launch_var_x_lines<T, L, c, kMaterial, kSolve, kNeumann>(a, device, limits, s);
      if constexpr (L_long != L && var_x_fits<T, L_long, c, kMaterial>(longest))
        if (!launched) launched = launch_var_x_lines<T, L_long, c, kMaterial, kSolve, kNeumann>(a, device, limits, s);
      return launched;
    });
  };
  if constexpr (kSolve)
    return with_var_kinds(material, unknown_faces != 0, launch);
  else
    return material ? launch(std::true_type{}, std::false_type{}) : launch(std::false_type{}, std::false_type{});
}

}  // namespace adi3d::cuda::fused
