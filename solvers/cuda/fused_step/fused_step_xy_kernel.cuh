#pragma once
// The x and y passes of the fused Douglas step (fused_step.cu) in one persistent kernel,
// so that the stage array d can go from the x pass to the y pass through L2 instead of
// DRAM: the step then needs 5 arrays per point from DRAM instead of 7 (this kernel: u
// in, d out; the z pass: d in, u in, u out). Internal to the CUDA backend; not the
// default (CudaPolicy::fused_xy says why, docs/perf/fused_xy_h100.txt has the traces).
//
// Each block takes one of two roles. The first blocks to start, one per x stream, take x
// streams: a stream is the bulk x pass (fused_step_kernels.cuh) over one tile of L x lines
// and a range of kseg planes, and its line warps announce each plane once their stores to
// it are complete (a release add on the plane's counter). Every other block, and an x
// block once no stream is left, takes y tiles (32 lines of one plane, solved as in the y
// pass) in the order in which the streams finish their planes; a claiming lane waits
// (acquire) until every x line of the tile's plane has been announced. Streams and tiles
// are claimed from counters in that order, and x work never waits for y work, so the
// kernel finishes with any number of resident blocks. The planes between the x front and
// the y front stay in L2 while they are few (then the y pass reads them from there and
// writes its result over them, and d reaches DRAM once per step instead of three times);
// nothing holds the x streams back yet, and measured they drift apart further than that
// (ncu: d read and written from DRAM as with the passes apart).
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/cuda/common/plane_ring.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace adi3d::cuda::fused {

// The kernel's counters (unsigned words, zeroed before each launch): the next stream, the
// next y tile, the blocks started, then per plane k the x line warps that have announced it.
constexpr int kXYPlanesDone = 3;
inline std::size_t xy_sync_words(int nz) { return static_cast<std::size_t>(kXYPlanesDone) + nz; }

template <class T>
struct XYArgs {
  PassArgs<T> x;      // the x pass's (kseg: planes per range)
  const T* y_factors; // the y pass's warp-solve factors (3 x 32 C)
  T y_s;              // the y pass's -a
  int partitions;     // ranges of kseg planes, each non-empty
  unsigned* sync;     // xy_sync_words(nz) words, zero at launch
  // Null, or kXYTraceWords per block (adi3d_fused_tune): %globaltimer at the block's
  // start, at the end of its x role (0 if it had none) and at its end; y tiles solved; ns
  // its claiming lanes spent waiting for planes.
  unsigned long long* trace;
};
constexpr int kXYTraceWords = 5;

// Lines per x tile (a block of L + 1 warps: the producer and L line warps), and plane
// slots (three planes are read while the next one loads).
template <class T>
constexpr int kXYLines = sizeof(T) == 8 ? 4 : 8;
constexpr int kXYSlots = 4;

// x tiles along y (each the L lines of one x stream per range of planes).
template <class T>
__host__ __device__ constexpr int xy_x_tiles(int ny) {
  return (ny - 2 + kXYLines<T> - 1) / kXYLines<T>;
}

// planes split into about `ranges` ranges of kseg planes, each non-empty.
struct XYRanges {
  int kseg, count;
};
inline XYRanges xy_ranges(int planes, int ranges) {
  const int kseg = (planes + ranges - 1) / ranges;
  return {kseg, (planes + kseg - 1) / kseg};
}

template <class T, int C>
std::size_t xy_pass_smem_bytes(int nx, int ny) {
  return std::max(x_pass_bulk_smem_bytes<T, kXYLines<T>, kXYSlots, C>(nx),
                  yz_pass_smem_bytes<T, kYZLines<T>, C>(ny));
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __forceinline__ void announce(unsigned* counter) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(counter) : "memory");
}
// Until *counter reaches target; returns the ns waited when tracing.
__device__ __forceinline__ unsigned long long wait_for(const unsigned* counter, unsigned target, bool trace) {
  const unsigned long long t0 = trace ? global_ns() : 0;
  for (;;) {
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(counter) : "memory");
    if (seen >= target) return trace ? global_ns() - t0 : 0;
    __nanosleep(256);
  }
}

// Thread 0 takes the counter's next value; every thread gets it after a block barrier.
// Two places in claims, by round, so that thread 0's next claim cannot overwrite a value
// that a slow thread has yet to read.
__device__ __forceinline__ int claim_next(unsigned* counter, int* claims, int round) {
  if (threadIdx.x == 0) claims[round & 1] = static_cast<int>(atomicAdd(counter, 1u));
  __syncthreads();
  return claims[round & 1];
}

// The x role: streams claimed one after another, all through one ring of plane slots
// (its sequence goes on from stream to stream). Returns the next claim round.
template <class T, int L, int NS, int C, bool kSource, int kLag>
__device__ __forceinline__ int xy_x_streams(const XYArgs<T>& xa, unsigned char* smem, int* claims) {
  const PassArgs<T>& a = xa.x;
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int stride = x_row_stride<T, C>(nx);
  const int tiles_j = xy_x_tiles<T>(ny);
  const int streams = tiles_j * xa.partitions;
  T* stages;
  PlaneRing<T, NS> ring = x_bulk_setup<T, L, NS>(smem, stride, 0, stages);
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  T al[C], gf[C], gb[C];
  if (warp < L) load_lane_factors<T, C>(a.chunk_factors, al, gf, gb);
  unsigned* done = xa.sync + kXYPlanesDone;
  int streamed = 0;  // planes through the ring so far
  int round = 0;
  for (;; ++round) {
    const int stream = claim_next(xa.sync, claims, round);
    if (stream >= streams) break;
    const int j0 = 1 + (stream % tiles_j) * L;
    const int kb = 1 + (stream / tiles_j) * a.kseg;
    const int ke = min(kb + a.kseg, nz - 1);  // planes kb..ke-1 are solved
    ring.first = kb - 1 - streamed;
    streamed += ke - kb + 2;
    if (warp == L) {
      if (lane == 0)
        ring.produce(a.u_in + static_cast<std::size_t>(j0 - 1) * nx, nxy, nx, static_cast<unsigned>(nx * sizeof(T)),
                     min(L + 2, ny - (j0 - 1)), kb - 1, ke);
      continue;
    }
    const int j = j0 + warp;
    const bool line = j <= ny - 2;  // warps past the grid solve garbage, store nothing, announce
    const int lane_off = (warp + 1) * stride + 1 + lane * C;
    T* stage = stages + warp * stride;
    ring.wait(kb - 1);
    ring.wait(kb);
    for (int k = kb; k < ke; ++k) {
      x_bulk_line_plane<T, NS, C, kSource>(a, ring, k, ke, j, line, lane_off, stage, al, gf, gb);
      // Plane k - kLag's store, kLag bulk groups back, is complete (or all but).
      if (lane == 0 && k >= kb + kLag) {
        if (line) bulk_wait_older<kLag>();
        fence_proxy_async_global();
        announce(done + k - kLag);
      }
    }
    ring.release(ke - 1);  // read for the last time by the last plane's rhs
    ring.release(ke);
    if (lane == 0) {
      bulk_wait();
      fence_proxy_async_global();
      for (int k = max(kb, ke - kLag); k < ke; ++k) announce(done + k);
    }
  }
  // Every plane streamed has been consumed and released: the barriers' memory goes to
  // the y tiles.
  if (threadIdx.x < 2 * NS) mbarrier_inval(ring.full + threadIdx.x);
  __syncthreads();
  return round + 1;
}

// The y role: tiles of LY = kYZLines lines (consecutive i) by the ny - 2 interior rows of
// one plane, in the yz_pass_kernel's layout (rows of LY + 1 values) and solve, by W = L + 1
// warps: warps 0..L-1 solve the tile's lines while lane 0 of warp L claims the next tile
// and waits for its plane; then every thread stores its values of the tile and, into the
// same places, copies the next tile's (a thread's stores read exactly what its copies
// wrote, so no barrier lies between them, and the next tile's loads overlap the stores).
template <class T, int L, int C, int W>
__device__ __forceinline__ void xy_y_tiles(const XYArgs<T>& xa, unsigned char* smem, int* claims, int round,
                                           unsigned long long* waited, int& solved) {
  constexpr int LY = kYZLines<T>;
  constexpr int kThreads = 32 * W;
  constexpr int RS = kThreads / LY;  // rows per sweep of the block
  constexpr int P = LY + 1;
  constexpr int LPW = LY / L;        // lines per solving warp
  constexpr int B = 8;               // values per thread in flight between the stores and copies
  static_assert(kThreads % LY == 0 && LY % L == 0, "whole rows per sweep, whole lines per warp");
  const PassArgs<T>& a = xa.x;
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int R = ny - 2;
  const int tile_elems = yz_alloc_rows<T, LY, C>(R) * P;
  T* const tile = reinterpret_cast<T*>(smem);
  T* const fac = tile + tile_elems;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid & 31;
  load_factors<T, C>(xa.y_factors, fac);
  for (int e = R * P + tid; e < tile_elems; e += kThreads) tile[e] = T(0);

  const int tiles_i = (nx + LY - 1) / LY;
  const unsigned lines_per_plane = static_cast<unsigned>(xy_x_tiles<T>(ny) * L);  // announcements
  const int total = tiles_i * xa.partitions * a.kseg;
  const unsigned* done = xa.sync + kXYPlanesDone;
  // Tile t: column tile t % tiles_i of the plane that the streams finish (t / tiles_i)-th:
  // the s-th plane of every range in turn. Past the last range's end (nz - 2): no tile.
  auto plane_of = [&](int t) {
    const int u = t / tiles_i;
    return 1 + (u % xa.partitions) * a.kseg + u / xa.partitions;
  };
  // The claiming lane: the next tile that lies in the grid (total when none is left), once
  // its plane has been announced by every x line.
  auto claim = [&]() {
    int t;
    do t = static_cast<int>(atomicAdd(xa.sync + 1, 1u));
    while (t < total && plane_of(t) >= nz - 1);
    if (t < total) *waited += wait_for(done + plane_of(t), lines_per_plane, xa.trace != nullptr);
    return t;
  };
  const int col = tid % LY, row0 = tid / LY;
  const int lim = R - lane * C;  // rows of this lane's chunk that are real
  const std::size_t sweep = RS * static_cast<std::size_t>(nx);
  // Where this thread's rows of tile t start in d; ok: the column is an interior line.
  auto locate = [&](int t, bool& ok) -> std::size_t {
    const int i = (t % tiles_i) * LY + col;
    ok = t < total && i >= 1 && i <= nx - 2;
    return ok ? i + nxy * plane_of(t) + (1 + row0) * static_cast<std::size_t>(nx) : 0;
  };
  // This thread's values of tile `out` to d (where out_ok) and tile `in`'s into their places
  // (zeros where !in_ok).
  auto store_and_copy = [&](std::size_t out, bool out_ok, std::size_t in, bool in_ok) {
    T* x = tile + row0 * P + col;
    for (int r = row0; r < R; r += B * RS, x += B * RS * P, out += B * sweep, in += B * sweep) {
      T v[B];
#pragma unroll
      for (int q = 0; q < B; ++q)
        if (r + q * RS < R) v[q] = x[q * RS * P];
#pragma unroll
      for (int q = 0; q < B; ++q)
        if (out_ok && r + q * RS < R) a.d[out + q * sweep] = v[q];
      // Issued after the stores that took the old values (in-order issue).
#pragma unroll
      for (int q = 0; q < B; ++q)
        if (r + q * RS < R) cp_async<sizeof(T)>(x + q * RS * P, in_ok ? a.d + in + q * sweep : a.d, in_ok);
    }
    cp_async_commit();
  };

  // The first tile: thread 0 claims it, as the claiming lane does the later ones.
  if (tid == 0) claims[round & 1] = claim();
  __syncthreads();
  int t = claims[round & 1];
  bool ok;
  std::size_t p0 = locate(t, ok);
  store_and_copy(0, false, p0, ok);
  while (t < total) {
    ++solved;
    cp_async_wait<0>();
    __syncthreads();  // tile t is in place; everyone has read the last claim
    ++round;
    if (warp < L) {
#pragma unroll 1
      for (int s = 0; s < LPW; ++s) solve_tile_line<T, C, P>(tile + lane * C * P + warp * LPW + s, fac, xa.y_s, lim);
    } else if (lane == 0) {
      claims[round & 1] = claim();
    }
    __syncthreads();  // tile t solved; the next claim is out
    const int next = claims[round & 1];
    bool next_ok;
    const std::size_t next_p0 = locate(next, next_ok);
    store_and_copy(p0, ok, next_p0, next_ok);
    t = next;
    p0 = next_p0;
    ok = next_ok;
  }
  cp_async_wait<0>();  // the last copies (of no tile: zeros)
}

// Block 32 (L + 1) threads, two blocks per SM (both roles' shared memory and registers
// allow it); grid: the resident blocks. Dynamic shared memory: xy_pass_smem_bytes.
// kLag: the planes by which an x line warp's announcements trail its stores (1 and 2 ran
// the same: docs/perf/fused_xy_h100.txt).
template <class T, int C, bool kSource, int kLag = 2>
__global__ void __launch_bounds__(32 * (kXYLines<T> + 1), 2) xy_pass_kernel(XYArgs<T> a) {
  constexpr int L = kXYLines<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int claims[2];
  __shared__ int x_role;
  __shared__ unsigned long long waited;  // by the claiming threads, one after another
  const unsigned long long start = a.trace ? global_ns() : 0;
  const unsigned streams = static_cast<unsigned>(xy_x_tiles<T>(a.x.n[1]) * a.partitions);
  if (threadIdx.x == 0) {
    x_role = atomicAdd(a.sync + 2, 1u) < streams;
    waited = 0;
  }
  __syncthreads();
  int round = 0;
  if (x_role) round = xy_x_streams<T, L, kXYSlots, C, kSource, kLag>(a, smem_raw, claims);
  const unsigned long long x_end = a.trace && x_role ? global_ns() : 0;
  int solved = 0;
  xy_y_tiles<T, L, C, L + 1>(a, smem_raw, claims, round, &waited, solved);
  if (a.trace && threadIdx.x == 0) {
    unsigned long long* t = a.trace + static_cast<std::size_t>(blockIdx.x) * kXYTraceWords;
    t[0] = start;
    t[1] = x_end;
    t[2] = global_ns();
    t[3] = static_cast<unsigned long long>(solved);
    t[4] = waited;
  }
}

}  // namespace adi3d::cuda::fused
