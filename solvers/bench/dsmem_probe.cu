// adi3d_dsmem_probe: what distributed shared memory (DSMEM) costs on this GPU, the
// numbers behind the cluster x+y pass's verdict (issue 43; cluster_xy_probe.cu):
//   latency:   a chain of dependent loads by one thread from its block's own shared
//              memory and from another block's of its cluster (ns and SM cycles a load);
//   bandwidth: every block of every resident cluster reading, then writing, 16-byte words
//              of another block's shared memory (the pull and push hand-offs), against
//              the same on its own shared memory (GB/s over the whole GPU and a SM);
//   barriers:  a cluster barrier against a block barrier, back to back (ns each).
// Clusters of 16 blocks (non-portable; the cluster pass's size) and of 2, one block of
// 512 threads a SM. Each timing: the median of 15 x 10 calls after a warm-up (CUDA events);
// the latencies and barriers are read off the SM's clocks inside the kernel.
// A developer's tool (docs/perf/cluster_xy_probe_h200.txt); not installed.
//   adi3d_dsmem_probe
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/event_timer.cuh"

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

using adi3d::cuda::EventTimer;

namespace {

constexpr int kThreads = 512;
constexpr int kWords = 10240;       // 16-byte words a block's buffer: 160 KB (one block a SM)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

// Thread 0 of rank 0 follows the chain in rank `target`'s ring (0: its own), 4096
// dependent loads; out: ns and cycles over the loads, and the last index (kept live).
template <int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    chain_latency(int target, double* out, unsigned* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kRing = 8192;         // entries of the chain: 32 KB
  constexpr int kChainStride = 2053;  // odd: the chain visits every entry, lines far apart
  constexpr int kChainLoads = 4096;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ unsigned ring[kRing];
  for (int i = threadIdx.x; i < kRing; i += kThreads) ring[i] = (i + kChainStride) % kRing;
  cluster.sync();  // every ring is written
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    const unsigned* chain = cluster.map_shared_rank(ring, target);
    unsigned i = chain[0];  // warm the path
    const unsigned long long t0 = global_ns();
    const long long c0 = clock64();
    for (int s = 0; s < kChainLoads; ++s) i = chain[i];
    const long long c1 = clock64();
    const unsigned long long t1 = global_ns();
    out[0] = static_cast<double>(t1 - t0) / kChainLoads;
    out[1] = static_cast<double>(c1 - c0) / kChainLoads;
    *sink = i;
  }
  cluster.sync();  // no block leaves while its ring may still be read
#endif
}

// Every block reads (write = 0) or writes (1) the 16-byte words of the buffer of rank + shift
// (0: its own), `passes` times over.
template <int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    sweep(int shift, int write, int passes, float* sink) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ float4 buf[];  // kWords
  for (int w = threadIdx.x; w < kWords; w += kThreads) buf[w] = make_float4(w, 1, 2, 3);
  cluster.sync();
  float4* other = cluster.map_shared_rank(buf, (cluster.block_rank() + shift) % kCluster);
  float acc = 0;
  for (int p = 0; p < passes; ++p) {
    if (write) {
#pragma unroll 4
      for (int w = threadIdx.x; w < kWords; w += kThreads) other[w] = make_float4(p, w, 0, 1);
    } else {
#pragma unroll 4
      for (int w = threadIdx.x; w < kWords; w += kThreads) {
        const float4 v = other[w];
        acc += v.x + v.y + v.z + v.w;
      }
    }
  }
  cluster.sync();  // every access to another block's buffer is done
  if (acc == -1.0f) sink[blockIdx.x] = acc;  // keeps the reads (never true: the words are >= 0)
#endif
}

// 2048 barriers back to back, a cluster's (cluster = 1) or the block's; out: ns each
// (thread 0 of rank 0).
template <int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    barriers(int cluster_barrier, double* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kBarriers = 2048;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const unsigned long long t0 = global_ns();
  for (int s = 0; s < kBarriers; ++s) {
    if (cluster_barrier)
      cluster.sync();
    else
      __syncthreads();
  }
  const unsigned long long t1 = global_ns();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) out[0] = static_cast<double>(t1 - t0) / kBarriers;
  cluster.sync();
#endif
}

constexpr std::size_t kSweepBytes = kWords * sizeof(float4);

template <class Kernel>
int resident_clusters(Kernel kernel, int cluster, std::size_t smem) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = smem;
  int clusters = 0;
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  if (clusters < 1) throw std::runtime_error("no cluster fits on this device");
  return clusters;
}

template <int kCluster>
void measure(double* out, unsigned* sink, float* sink_f, cudaStream_t stream) {
  EventTimer timer;
  constexpr int kWarmup = 2, kRepetitions = 15, kCalls = 10;
  std::printf("clusters of %d blocks (%d threads a block):\n", kCluster, kThreads);
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(chain_latency<kCluster>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(sweep<kCluster>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(barriers<kCluster>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(sweep<kCluster>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kSweepBytes)));

  double host[2];
  for (const int target : {0, kCluster / 2}) {
    chain_latency<kCluster><<<kCluster, kThreads, 0, stream>>>(target, out, sink);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(host, out, sizeof(host), cudaMemcpyDeviceToHost, stream));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::printf("  latency, a dependent load from %-26s %6.1f ns  %6.1f cycles\n",
                target == 0 ? "the block's own shared memory:" : "another block's (DSMEM):", host[0], host[1]);
  }

  const int clusters = resident_clusters(sweep<kCluster>, kCluster, kSweepBytes);
  const int blocks = clusters * kCluster;
  constexpr int kPasses = 64;
  const double bytes = static_cast<double>(blocks) * kPasses * kWords * 16;
  for (const int write : {0, 1})
    for (const int shift : {0, 1}) {
      const double ms = timer.median_ms(
          stream, kWarmup, kRepetitions,
          [&] {
            sweep<kCluster><<<blocks, kThreads, kSweepBytes, stream>>>(shift, write, kPasses, sink_f);
            ADI3D_CUDA_LAUNCH_CHECK();
          },
          {}, kCalls);
      std::printf("  %s %-30s %8.0f GB/s  %6.1f GB/s a SM  (%d blocks)\n", write ? "writes to" : "reads of ",
                  shift ? "another block's shared memory" : "the block's own", 1e-6 * bytes / ms,
                  1e-6 * bytes / ms / blocks, blocks);
    }

  for (const int cluster_barrier : {0, 1}) {
    barriers<kCluster><<<blocks, kThreads, 0, stream>>>(cluster_barrier, out);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(host, out, sizeof(double), cudaMemcpyDeviceToHost, stream));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::printf("  a %s barrier, back to back: %6.1f ns\n", cluster_barrier ? "cluster" : "block", host[0]);
  }
}

int run() {
  int device = 0, cc = 0, sms = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cc < 9) throw std::runtime_error("thread-block clusters need sm_90 or newer");
  std::printf("distributed shared memory, %d SMs\n", sms);
  double* out = nullptr;
  unsigned* sink = nullptr;
  float* sink_f = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&out, 2 * sizeof(double)));
  ADI3D_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  ADI3D_CUDA_CHECK(cudaMalloc(&sink_f, 4 * sms * sizeof(float)));
  cudaStream_t stream = nullptr;
  ADI3D_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  measure<16>(out, sink, sink_f, stream);
  measure<2>(out, sink, sink_f, stream);
  ADI3D_CUDA_CHECK(cudaStreamDestroy(stream));
  ADI3D_CUDA_CHECK(cudaFree(out));
  ADI3D_CUDA_CHECK(cudaFree(sink));
  ADI3D_CUDA_CHECK(cudaFree(sink_f));
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adi3d_dsmem_probe: %s\n", e.what());
    return 1;
  }
}
