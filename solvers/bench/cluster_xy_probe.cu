// adi3d_cluster_xy_probe: can a thread-block cluster hand the x pass's result to the y
// pass through distributed shared memory (issue 43), so that d1 never reaches L2 or DRAM?
// A cluster of 16 blocks (non-portable size; one block per SM) walks its own run of z
// planes of an n x n x nz float grid (n = 512: the 1 MiB plane fits the cluster's shared
// memory). Per plane, block b forms dt (A u) of its R = n/16 x lines (7-point, constant
// weights, zero outside the grid), solves them with the fused step's warp solve and keeps
// them in its shared memory (two buffers: one cluster barrier a plane); after the barrier
// it reads columns b R .. b R + R-1 of every block's rows (DSMEM, 128-byte rows), solves
// those y lines and stores d. 2 arrays of DRAM traffic (u read, d written) where the x and
// y passes of the fused step move 4.
// Two hand-offs: pull (each block's x results in its own shared memory, read by the others
// after the barrier) and push (the x results stored into the other blocks' y tiles before
// it). Check: with identity factors d must be dt (A u) exactly (sampled against the host).
// Timing: the warp solve's real work (finite made-up factors), median of 15 x 10 calls
// after a warm-up, against a device copy in the same run (floor: one copy = 2 arrays).
// A developer's tool (docs/perf/cluster_xy_probe_h200.txt); not installed.
//   adi3d_cluster_xy_probe [n] [nz] [check]   (check: the checks alone, for compute-sanitizer)
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/event_timer.cuh"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using adi3d::cuda::EventTimer;

namespace {

using T = float;
constexpr int kClusterBlocks = 16;
constexpr int kWarps = 16, kThreads = 32 * kWarps;
constexpr int kCap = 17;  // rows per lane of the warp solve: lines of up to 544 nodes
constexpr int kStage = 32 * kCap + 2;

struct Weights {
  T wx, wy, wz, dt, s;
};

// Shared memory: two x-result buffers of R rows by n, then the y tile (32 C rows of R + 1,
// the chunk-wise reads' padding rows included) that the x pass's staging rows share, then
// the factors.
std::size_t smem_bytes(int n) {
  const int rows = n / kClusterBlocks;
  const std::size_t xbuf = 2 * static_cast<std::size_t>(rows) * n;
  const std::size_t tile = static_cast<std::size_t>(32 * kCap) * (rows + 1);
  const std::size_t staging = static_cast<std::size_t>(kWarps) * 2 * kStage;
  return (xbuf + (tile > staging ? tile : staging) + 3 * 32 * kCap) * sizeof(T);
}

// x line j of plane k: dt (A u) through this warp's two staging rows (u of the line at
// 1 + i, its y and z terms at i; u straight from global memory, zero outside the grid),
// solved; v: lane p's rows p C .. p C + C-1. Every lane of the warp.
__device__ __forceinline__ void solve_x_line(const T* __restrict__ u, int n, int nz, int j, int k, T* stage_c,
                                             T* stage_p, const T* fac, const Weights& w, T (&v)[kCap]) {
  const int lane = threadIdx.x % 32;
  const std::size_t nxy = static_cast<std::size_t>(n) * n;
  const std::size_t row = static_cast<std::size_t>(k) * nxy + static_cast<std::size_t>(j) * n;
#pragma unroll 4
  for (int i = lane; i < n; i += 32) {
    const T c = u[row + i];
    const T yn = j > 0 ? u[row + i - n] : T(0), ys = j < n - 1 ? u[row + i + n] : T(0);
    const T zm = k > 0 ? u[row + i - nxy] : T(0), zp = k < nz - 1 ? u[row + i + nxy] : T(0);
    stage_c[1 + i] = c;
    stage_p[i] = w.wy * (yn - c) + w.wy * (ys - c) + w.wz * (zm - c) + w.wz * (zp - c);
  }
  for (int i = n + lane; i < kStage - 1; i += 32) {
    stage_c[1 + i] = T(0);
    stage_p[i] = T(0);
  }
  if (lane == 0) stage_c[0] = T(0);
  __syncwarp();
#pragma unroll
  for (int q = 0; q < kCap; ++q) {
    const int i = lane * kCap + q;
    const T c = stage_c[1 + i];
    v[q] = w.dt * (w.wx * (stage_c[i] - c) + w.wx * (stage_c[i + 2] - c) + stage_p[i]);
  }
  adi3d::cuda::fused::warp_solve<T, kCap>(v, fac, w.s);
}

// The y lines of this block's columns in its tile (rows of P values, a line a column), two a
// warp, solved in place; the padding rows past n are zero.
__device__ __forceinline__ void solve_y_lines(T* tile, int n, int R, int P, const T* fac, T s) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int line = warp; line < R; line += kWarps) {
    T v[kCap];
#pragma unroll
    for (int q = 0; q < kCap; ++q) v[q] = tile[(lane * kCap + q) * P + line];
    adi3d::cuda::fused::warp_solve<T, kCap>(v, fac, s);
#pragma unroll
    for (int q = 0; q < kCap; ++q)
      if (lane * kCap + q < n) tile[(lane * kCap + q) * P + line] = v[q];
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    cluster_xy(const T* __restrict__ u, T* __restrict__ d, int n, int nz, int planes_per_cluster,
               const T* __restrict__ factors, Weights w, int phases) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int R = n / kClusterBlocks, P = R + 1;
  const int rank = static_cast<int>(cluster.block_rank());
  T* const xbuf = reinterpret_cast<T*>(smem_raw);
  T* const tile = xbuf + 2 * R * n;
  const int tile_elems = 32 * kCap * P, staging_elems = kWarps * 2 * kStage;
  T* const fac = tile + (tile_elems > staging_elems ? tile_elems : staging_elems);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  adi3d::cuda::fused::load_factors<T, kCap>(factors, fac);
  __syncthreads();  // (racecheck found the first plane's solves reading factors still being written)
  const std::size_t nxy = static_cast<std::size_t>(n) * n;
  const int k_begin = static_cast<int>(blockIdx.x / kClusterBlocks) * planes_per_cluster;
  const int k_end = min(nz, k_begin + planes_per_cluster);
  T* const stage_c = tile + warp * 2 * kStage;  // u of the line, node i at 1 + i
  T* const stage_p = stage_c + kStage;          // its y and z terms
  for (int k = k_begin, buffer = 0; k < k_end; ++k, buffer ^= 1) {
    // x: R lines of this block, two a warp.
    T* const mine = xbuf + buffer * R * n;
    for (int line = warp; line < R; line += kWarps) {
      const int j = rank * R + line;
      T v[kCap];
      solve_x_line(u, n, nz, j, k, stage_c, stage_p, fac, w, v);
#pragma unroll
      for (int q = 0; q < kCap; ++q) {
        const int i = lane * kCap + q;
        if (i < n) mine[line * n + i] = v[q];
      }
      __syncwarp();  // the staging rows are the next line's
    }
    if (phases == 0) continue;  // the x lines alone (phases 1: and the barrier)
    cluster.sync();  // every block's x lines of plane k are in its shared memory
    if (phases == 1) continue;
    // y: columns rank R .. rank R + R-1 of every block's rows, R lines.
    const int col = tid % R;
    for (int m = tid / R; m < n; m += kThreads / R) {
      const T* src = cluster.map_shared_rank(xbuf, m / R);
      tile[m * P + col] = src[buffer * R * n + (m % R) * n + rank * R + col];
    }
    for (int e = n * P + tid; e < tile_elems; e += kThreads) tile[e] = T(0);
    __syncthreads();
    solve_y_lines(tile, n, R, P, fac, w.s);
    __syncthreads();
    for (int m = tid / R; m < n; m += kThreads / R)
      d[static_cast<std::size_t>(k) * nxy + static_cast<std::size_t>(m) * n + rank * R + col] = tile[m * P + col];
    __syncthreads();  // the tile is the next plane's staging
  }
  cluster.sync();  // no block leaves while another may still read its shared memory
#endif
}

// The same pass with the hand-off pushed: each warp stores its solved x line straight into
// the y tiles of the 16 blocks (16 coalesced 128-byte DSMEM stores a line, which do not
// stall the warp as remote loads do); after the barrier each block solves the y lines of
// its own tile. Two tiles a block and no x-result buffers: a block pushes plane k+1 into
// the tiles of plane k-1 only past the barrier of plane k, which every block reaches after
// its y lines of k-1. phases: 1 stops after the barrier, 2 the whole pass.
std::size_t push_smem_bytes(int n) {
  const int rows = n / kClusterBlocks;
  const std::size_t tiles = 2 * static_cast<std::size_t>(32 * kCap) * (rows + 1);
  const std::size_t staging = static_cast<std::size_t>(kWarps) * 2 * kStage;
  return (tiles + staging + 3 * 32 * kCap) * sizeof(T);
}

__global__ void __launch_bounds__(kThreads, 1)
    cluster_xy_push(const T* __restrict__ u, T* __restrict__ d, int n, int nz, int planes_per_cluster,
                    const T* __restrict__ factors, Weights w, int phases) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int R = n / kClusterBlocks, P = R + 1;
  const int rank = static_cast<int>(cluster.block_rank());
  const int tile_elems = 32 * kCap * P;
  T* const tiles = reinterpret_cast<T*>(smem_raw);
  T* const staging = tiles + 2 * tile_elems;
  T* const fac = staging + kWarps * 2 * kStage;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  adi3d::cuda::fused::load_factors<T, kCap>(factors, fac);
  for (int e = tid; e < 2 * tile_elems; e += kThreads) tiles[e] = T(0);  // padding rows stay 0
  cluster.sync();
  const std::size_t nxy = static_cast<std::size_t>(n) * n;
  const int k_begin = static_cast<int>(blockIdx.x / kClusterBlocks) * planes_per_cluster;
  const int k_end = min(nz, k_begin + planes_per_cluster);
  T* const stage_c = staging + warp * 2 * kStage;
  T* const stage_p = stage_c + kStage;
  const int col = tid % R;
  for (int k = k_begin, buffer = 0; k < k_end; ++k, buffer ^= 1) {
    for (int line = warp; line < R; line += kWarps) {
      const int j = rank * R + line;
      T v[kCap];
      solve_x_line(u, n, nz, j, k, stage_c, stage_p, fac, w, v);
      __syncwarp();  // every lane has read the staging rows
#pragma unroll
      for (int q = 0; q < kCap; ++q) stage_p[lane * kCap + q] = v[q];
      __syncwarp();
      // Node i of the line to block i / R, row j, column i % R of its tile.
      if (lane < R)
        for (int b = 0; b < kClusterBlocks; ++b) {
          T* remote = cluster.map_shared_rank(tiles, b);
          remote[buffer * tile_elems + j * P + lane] = stage_p[b * R + lane];
        }
      __syncwarp();
    }
    cluster.sync();  // every block's pushes of plane k have landed
    if (phases == 1) continue;
    T* const tile = tiles + buffer * tile_elems;
    solve_y_lines(tile, n, R, P, fac, w.s);
    __syncthreads();
    for (int m = tid / R; m < n; m += kThreads / R)
      d[static_cast<std::size_t>(k) * nxy + static_cast<std::size_t>(m) * n + rank * R + col] = tile[m * P + col];
  }
  cluster.sync();
#endif
}

__global__ void fill(T* x, std::size_t count, T offset) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[k] = offset + T(1e-3) * T((k * 7919) % 1000);
}

// The warp solve's factors (alpha, Gf, Gb per chunk row) of rows with alpha a and beta = s a.
std::vector<T> chunk_factors(T a, T s) {
  std::vector<T> f(3 * 32 * kCap);
  const T beta = s * a;
  for (int p = 0; p < 32; ++p)
    for (int q = 0; q < kCap; ++q) {
      f[p * kCap + q] = a;
      f[32 * kCap + p * kCap + q] = static_cast<T>(std::pow(beta, q + 1));
      f[64 * kCap + p * kCap + q] = static_cast<T>(std::pow(beta, kCap - q));
    }
  return f;
}

using Kernel = void (*)(const T*, T*, int, int, int, const T*, Weights, int);

// The launch configuration of `clusters` clusters of kClusterBlocks blocks (the attribute
// lives beside the configuration that points at it: not copyable).
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};
  ClusterLaunch(int clusters, std::size_t smem, cudaStream_t stream) {
    config.gridDim = dim3(kClusterBlocks * clusters);
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kClusterBlocks;
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

struct Launch {
  Kernel kernel = nullptr;
  int clusters = 0, planes_per_cluster = 0;
  std::size_t smem = 0;
};

Launch plan(Kernel kernel, std::size_t smem, int nz) {
  Launch l;
  l.kernel = kernel;
  l.smem = smem;
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(l.smem)));
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  ClusterLaunch one(1, l.smem, nullptr);
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&l.clusters, kernel, &one.config));
  if (l.clusters < 1) throw std::runtime_error("no cluster of 16 blocks fits on this device");
  l.planes_per_cluster = (nz + l.clusters - 1) / l.clusters;
  l.clusters = (nz + l.planes_per_cluster - 1) / l.planes_per_cluster;
  return l;
}

// phases: 0 the x lines alone, 1 and the cluster barrier, 2 the whole pass.
void launch(const Launch& l, const T* u, T* d, int n, int nz, const T* factors, Weights w, cudaStream_t stream,
            int phases = 2) {
  ClusterLaunch all(l.clusters, l.smem, stream);
  ADI3D_CUDA_CHECK(cudaLaunchKernelEx(&all.config, l.kernel, u, d, n, nz, l.planes_per_cluster, factors, w, phases));
}

// dt (A u) at node (i, j, k), zero outside the grid, as the kernel forms it.
double rhs_at(const std::vector<T>& u, int n, int nz, int i, int j, int k, const Weights& w) {
  const auto at = [&](int a, int b, int c) -> double {
    if (a < 0 || a >= n || b < 0 || b >= n || c < 0 || c >= nz) return 0;
    return u[(static_cast<std::size_t>(c) * n + b) * n + a];
  };
  const double c = at(i, j, k);
  return w.dt * (w.wx * (at(i - 1, j, k) - c) + w.wx * (at(i + 1, j, k) - c) + w.wy * (at(i, j - 1, k) - c) +
                 w.wy * (at(i, j + 1, k) - c) + w.wz * (at(i, j, k - 1) - c) + w.wz * (at(i, j, k + 1) - c));
}

int run(int n, int nz, bool check_only) {
  if (n % kClusterBlocks != 0 || n / kClusterBlocks > 32 || n > 32 * kCap)
    throw std::runtime_error("n: a multiple of 16 up to 512");
  int device = 0, cc = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, device));
  if (cc < 9) throw std::runtime_error("thread-block clusters need sm_90 or newer");
  const std::size_t count = static_cast<std::size_t>(n) * n * nz, bytes = count * sizeof(T);
  T *u = nullptr, *d = nullptr, *factors = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&u, bytes));
  ADI3D_CUDA_CHECK(cudaMalloc(&d, bytes));
  ADI3D_CUDA_CHECK(cudaMalloc(&factors, 3 * 32 * kCap * sizeof(T)));
  fill<<<1024, 256>>>(u, count, T(1));
  ADI3D_CUDA_LAUNCH_CHECK();
  fill<<<1024, 256>>>(d, count, T(2));
  ADI3D_CUDA_LAUNCH_CHECK();
  cudaStream_t stream = nullptr;
  ADI3D_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const T h2 = T(n - 1) * T(n - 1);
  const Weights w{h2, h2, h2, T(1e-6), T(-0.25)};
  const std::vector<T> identity = chunk_factors(T(1), T(0)), real = chunk_factors(T(0.5), w.s);
  std::vector<T> hu(count), hd(count);
  ADI3D_CUDA_CHECK(cudaMemcpy(hu.data(), u, bytes, cudaMemcpyDeviceToHost));
  EventTimer timer;
  constexpr int kWarmup = 2, kRepetitions = 15, kCalls = 10;
  T* copy = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&copy, bytes));
  const double copy_ms = timer.median_ms(
      stream, kWarmup, kRepetitions,
      [&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(copy, u, bytes, cudaMemcpyDeviceToDevice, stream)); }, {}, kCalls);
  std::printf("float %dx%dx%d: copy %.3f ms (%.0f GB/s); the floor of an x+y pass (2 arrays) is one copy\n", n, n,
              nz, copy_ms, 2e-6 * bytes / copy_ms);
  struct Variant {
    const char* name;
    Launch launch;
    std::vector<const char*> parts;  // by `phases`, the whole pass last
  };
  const Variant variants[] = {
      {"pull (remote loads after the barrier)", plan(cluster_xy, smem_bytes(n), nz),
       {"the x lines alone (u read, nothing stored)", "the x lines and the cluster barrier", "the whole pass"}},
      {"push (remote stores before the barrier)", plan(cluster_xy_push, push_smem_bytes(n), nz),
       {"", "the x lines, their pushes and the barrier", "the whole pass"}}};
  bool all_moved = true;
  for (const Variant& v : variants) {
    const Launch& l = v.launch;
    // Identity factors (alpha 1, beta 0): d = dt (A u), the movement alone, checked.
    ADI3D_CUDA_CHECK(cudaMemcpy(factors, identity.data(), identity.size() * sizeof(T), cudaMemcpyHostToDevice));
    fill<<<1024, 256, 0, stream>>>(d, count, T(2));
    ADI3D_CUDA_LAUNCH_CHECK();
    launch(l, u, d, n, nz, factors, Weights{w.wx, w.wy, w.wz, w.dt, T(0)}, stream);
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream));
    ADI3D_CUDA_CHECK(cudaMemcpy(hd.data(), d, bytes, cudaMemcpyDeviceToHost));
    std::mt19937 rng(3);
    double worst = 0, scale = 0;
    for (int t = 0; t < 20000; ++t) {
      const int i = static_cast<int>(rng() % n), j = static_cast<int>(rng() % n), k = static_cast<int>(rng() % nz);
      const double expected = rhs_at(hu, n, nz, i, j, k, w);
      worst = std::max(worst, std::fabs(expected - hd[(static_cast<std::size_t>(k) * n + j) * n + i]));
      scale = std::max(scale, std::fabs(expected));
    }
    const bool moved = worst <= 1e-5 * scale;
    all_moved = all_moved && moved;
    std::printf("  %s: %d clusters of %d blocks, %zu bytes of shared memory a block, %d planes a cluster\n", v.name,
                l.clusters, kClusterBlocks, l.smem, l.planes_per_cluster);
    std::printf("    check (identity factors, 20000 nodes): max |d - dt A u| = %.3g of max %.3g: %s\n", worst, scale,
                moved ? "ok" : "WRONG");
    // Timing with the solve's real work.
    ADI3D_CUDA_CHECK(cudaMemcpy(factors, real.data(), real.size() * sizeof(T), cudaMemcpyHostToDevice));
    for (int phases = 0; phases < 3 && !check_only; ++phases) {
      if (!*v.parts[phases]) continue;
      const double ms = timer.median_ms(
          stream, kWarmup, kRepetitions, [&] { launch(l, u, d, n, nz, factors, w, stream, phases); }, {}, kCalls);
      std::printf("    %-45s %.3f ms (%5.1f us a plane)", v.parts[phases], ms, 1e3 * ms / l.planes_per_cluster);
      if (phases == 2) std::printf(": %.1f%% of the floor", 100 * copy_ms / ms);
      std::printf("\n");
    }
  }
  ADI3D_CUDA_CHECK(cudaStreamDestroy(stream));
  ADI3D_CUDA_CHECK(cudaFree(copy));
  ADI3D_CUDA_CHECK(cudaFree(u));
  ADI3D_CUDA_CHECK(cudaFree(d));
  ADI3D_CUDA_CHECK(cudaFree(factors));
  return all_moved ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int n = argc > 1 ? std::atoi(argv[1]) : 512;
    const int nz = argc > 2 ? std::atoi(argv[2]) : n;
    return run(n, nz, argc > 3 && std::string(argv[3]) == "check");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adi3d_cluster_xy_probe: %s\n", e.what());
    return 1;
  }
}
