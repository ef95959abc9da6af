// Norms of x - y (sum of squares, max |.|, sum, sum of |.|), or the dot product of x and y,
// in double: grid-stride accumulation per
// thread (4 loads in flight), warp shuffles, a shared-memory tree across warps, then one atomic per block;
// the last block to finish reduces the per-block partials in a fixed order, so results do
// not depend on block scheduling (seed 004). Reads 1-2 values per point, writes nothing.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"

#include <algorithm>

namespace adi3d::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct Acc {
  double sq, mx, sum, ab;
};

__device__ Acc combine(Acc a, Acc b) { return {a.sq + b.sq, fmax(a.mx, b.mx), a.sum + b.sum, a.ab + b.ab}; }

__device__ Acc warp_reduce(Acc a) {
  for (int off = 16; off > 0; off >>= 1) {
    Acc o;
    o.sq = __shfl_down_sync(0xffffffffu, a.sq, off);
    o.mx = __shfl_down_sync(0xffffffffu, a.mx, off);
    o.sum = __shfl_down_sync(0xffffffffu, a.sum, off);
    o.ab = __shfl_down_sync(0xffffffffu, a.ab, off);
    a = combine(a, o);
  }
  return a;
}

// Block-wide reduction; the result is valid in thread 0.
__device__ Acc block_reduce(Acc a, Acc* shared) {
  a = warp_reduce(a);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < kWarps ? shared[lane] : Acc{0, 0, 0, 0};
    a = warp_reduce(a);
  }
  return a;
}

// kDot: the sum of x y in the "sum" slot (the others stay 0).
template <class T, bool kDot = false>
__global__ void __launch_bounds__(kThreads)
    norms_kernel(const T* __restrict__ x, const T* __restrict__ y, std::size_t n,
                 double* __restrict__ partials, unsigned* counter, double* __restrict__ result) {
  __shared__ Acc shared[kWarps];
  __shared__ bool last_block;
  Acc a{0, 0, 0, 0};
  const auto add = [&](T xv, T yv) {
    if constexpr (kDot) {
      a.sum += static_cast<double>(xv) * static_cast<double>(yv);
    } else {
      const double v = static_cast<double>(xv) - static_cast<double>(yv);
      a.sq += v * v;
      a.sum += v;
      a.ab += fabs(v);
      a.mx = fmax(a.mx, fabs(v));
    }
  };
  // kUnroll loads in flight a thread, then their sums in the order of a plain grid-stride
  // loop (the same values per thread, in the same order, whatever the unrolling).
  constexpr int kUnroll = 4;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; e + (kUnroll - 1) * stride < n; e += kUnroll * stride) {
    T xv[kUnroll], yv[kUnroll];
    for (int u = 0; u < kUnroll; ++u) {
      xv[u] = x[e + u * stride];
      yv[u] = y ? y[e + u * stride] : T(0);
    }
    for (int u = 0; u < kUnroll; ++u) add(xv[u], yv[u]);
  }
  for (; e < n; e += stride) add(x[e], y ? y[e] : T(0));
  a = block_reduce(a, shared);
  if (threadIdx.x == 0) {
    double* mine = partials + kNormValues * blockIdx.x;
    mine[0] = a.sq;
    mine[1] = a.mx;
    mine[2] = a.sum;
    mine[3] = a.ab;
    // Make the partials visible device-wide before announcing this block is done.
    __threadfence();
    const unsigned done = atomicAdd(counter, 1u);
    last_block = (done == gridDim.x - 1);
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();  // see every other block's partials
  Acc t{0, 0, 0, 0};
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    // volatile: the partials were written by other blocks during this launch.
    const volatile double* p = partials + kNormValues * b;
    t = combine(t, Acc{p[0], p[1], p[2], p[3]});
  }
  __syncthreads();  // shared[] is reused
  t = block_reduce(t, shared);
  if (threadIdx.x == 0) {
    result[0] = t.sq;
    result[1] = t.mx;
    result[2] = t.sum;
    result[3] = t.ab;
    *counter = 0;  // ready for the next call on this stream
  }
}

// The sum of each plane: a block a plane (grid-stride over the planes), the same order of
// terms whatever the grid.
template <class T>
__global__ void __launch_bounds__(kThreads)
    plane_sums_kernel(const T* __restrict__ x, std::size_t plane, std::size_t planes, double* __restrict__ sums) {
  __shared__ Acc shared[kWarps];
  for (std::size_t k = blockIdx.x; k < planes; k += gridDim.x) {
    const T* p = x + k * plane;
    Acc a{0, 0, 0, 0};
    for (std::size_t e = threadIdx.x; e < plane; e += blockDim.x) a.sum += static_cast<double>(p[e]);
    a = block_reduce(a, shared);
    if (threadIdx.x == 0) sums[k] = a.sum;
    __syncthreads();  // shared[] is reused by the next plane
  }
}

// Each block's largest ratio of x or y neighbours' alpha into block_max[blockIdx.x].
template <class T>
__global__ void __launch_bounds__(kThreads)
    in_plane_jump_kernel(const T* __restrict__ alpha, int nx, int ny, std::size_t n, double* __restrict__ block_max) {
  __shared__ Acc shared[kWarps];
  Acc a{0, 1, 0, 0};  // the max slot
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(e % nx), j = static_cast<int>(e / nx % ny);
    const double v = alpha[e];
    if (i + 1 < nx) {
      const double w = alpha[e + 1];
      a.mx = fmax(a.mx, fmax(v / w, w / v));
    }
    if (j + 1 < ny) {
      const double w = alpha[e + nx];
      a.mx = fmax(a.mx, fmax(v / w, w / v));
    }
  }
  a = block_reduce(a, shared);
  if (threadIdx.x == 0) block_max[blockIdx.x] = a.mx;
}

}  // namespace

int in_plane_jump_blocks(std::size_t n) {
  return static_cast<int>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 1024));
}

template <class T>
void launch_in_plane_jump(const T* alpha, int nx, int ny, std::size_t n, double* block_max, cudaStream_t stream) {
  in_plane_jump_kernel<<<in_plane_jump_blocks(n), kThreads, 0, stream>>>(alpha, nx, ny, n, block_max);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_plane_sums(const T* x, std::size_t plane, std::size_t planes, double* sums, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(planes, 65535));
  plane_sums_kernel<<<blocks, kThreads, 0, stream>>>(x, plane, planes, sums);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_difference_norms(const T* x, const T* y, std::size_t n, const NormScratch& s,
                             cudaStream_t stream) {
  const int blocks = static_cast<int>(
      std::min<std::size_t>((n + kThreads - 1) / kThreads, static_cast<std::size_t>(s.max_blocks)));
  norms_kernel<<<blocks, kThreads, 0, stream>>>(x, y, n, s.partials, s.counter, s.result);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_dot(const T* x, const T* y, std::size_t n, const NormScratch& s, cudaStream_t stream) {
  const int blocks = static_cast<int>(
      std::min<std::size_t>((n + kThreads - 1) / kThreads, static_cast<std::size_t>(s.max_blocks)));
  norms_kernel<T, true><<<blocks, kThreads, 0, stream>>>(x, y, n, s.partials, s.counter, s.result);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template void launch_in_plane_jump<float>(const float*, int, int, std::size_t, double*, cudaStream_t);
template void launch_in_plane_jump<double>(const double*, int, int, std::size_t, double*, cudaStream_t);
template void launch_plane_sums<float>(const float*, std::size_t, std::size_t, double*, cudaStream_t);
template void launch_plane_sums<double>(const double*, std::size_t, std::size_t, double*, cudaStream_t);
template void launch_dot<float>(const float*, const float*, std::size_t, const NormScratch&, cudaStream_t);
template void launch_dot<double>(const double*, const double*, std::size_t, const NormScratch&, cudaStream_t);
template void launch_difference_norms<float>(const float*, const float*, std::size_t,
                                             const NormScratch&, cudaStream_t);
template void launch_difference_norms<double>(const double*, const double*, std::size_t,
                                              const NormScratch&, cudaStream_t);

}  // namespace adi3d::cuda
