#pragma once
// Device helpers for timing and checking the tridiagonal solver: fresh random diagonally
// dominant batches (counter-based hash, so any size fills in one pass) and the relative
// residual ||A x - d|| / ||d|| accumulated in double. Bytes: fill writes 4 arrays; the
// residual reads 5.
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/tridiag/tridiag.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace adi3d::tridiag::detail {

__host__ __device__ inline double hash_uniform(std::uint64_t x) {
  // splitmix64 finaliser: a uniform value in [0, 1).
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
}

// a, c in [-1, 1]; b in [2.5, 3.5] (strictly dominant: |b| > |a| + |c|); d in +-[0.1, 1.1].
template <class T>
__global__ void k_fill_random(T* a, T* b, T* c, T* d, long total, std::uint64_t seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const std::uint64_t k = seed * 0x100000001B3ull + 4ull * static_cast<std::uint64_t>(i);
    a[i] = static_cast<T>(2.0 * hash_uniform(k) - 1.0);
    b[i] = static_cast<T>(2.5 + hash_uniform(k + 1));
    c[i] = static_cast<T>(2.0 * hash_uniform(k + 2) - 1.0);
    const double u = hash_uniform(k + 3);
    d[i] = static_cast<T>(u < 0.5 ? -(0.1 + 2.0 * u) : 0.1 + 2.0 * (u - 0.5));
  }
}

template <class T>
void fill_random(T* a, T* b, T* c, T* d, long total, std::uint64_t seed, cudaStream_t st = nullptr) {
  const int threads = 256;
  const long blocks = std::min<long>((total + threads - 1) / threads, 65536);
  if (blocks <= 0) return;
  k_fill_random<<<static_cast<unsigned>(blocks), threads, 0, st>>>(a, b, c, d, total, seed);
  ADI3D_CUDA_LAUNCH_CHECK();
}

// acc[0] += sum (A x - d)^2, acc[1] += sum d^2 over a batch (cyclic corners included).
template <class T>
__global__ void k_residual(TridiagBatch<T> bt, const T* x, const T* d0, double* acc) {
  const long total = bt.n * bt.count;
  double r2 = 0, d2 = 0;
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long>(gridDim.x) * blockDim.x) {
    long s, i, stride;
    if (bt.layout == Layout::contiguous) {
      s = idx / bt.n;
      i = idx - s * bt.n;
      stride = 1;
    } else {
      i = idx / bt.count;
      s = idx - i * bt.count;
      stride = bt.count;
    }
    const long q = idx;
    const long first = q - i * stride, last = first + (bt.n - 1) * stride;
    double ax = static_cast<double>(bt.b[q]) * x[q];
    if (i > 0)
      ax += static_cast<double>(bt.a[q]) * x[q - stride];
    else if (bt.cyclic && bt.n > 1)
      ax += static_cast<double>(bt.a[q]) * x[last];
    else if (bt.cyclic)
      ax += static_cast<double>(bt.a[q]) * x[q];
    if (i + 1 < bt.n)
      ax += static_cast<double>(bt.c[q]) * x[q + stride];
    else if (bt.cyclic && bt.n > 1)
      ax += static_cast<double>(bt.c[q]) * x[first];
    else if (bt.cyclic)
      ax += static_cast<double>(bt.c[q]) * x[q];
    const double r = ax - static_cast<double>(d0[q]);
    r2 += r * r;
    d2 += static_cast<double>(d0[q]) * d0[q];
  }
  for (int o = 16; o > 0; o >>= 1) {
    r2 += __shfl_down_sync(0xffffffffu, r2, o);
    d2 += __shfl_down_sync(0xffffffffu, d2, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(acc, r2);
    atomicAdd(acc + 1, d2);
  }
}

// ||A x - d0|| / ||d0|| with bt.a, bt.b, bt.c the matrix (bt.d unused).
template <class T>
double relative_residual(const TridiagBatch<T>& bt, const T* x, const T* d0) {
  double* acc = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&acc, 2 * sizeof(double)));
  double h[2] = {0, 0};
  try {
    ADI3D_CUDA_CHECK(cudaMemset(acc, 0, 2 * sizeof(double)));
    const long total = bt.n * bt.count;
    const long blocks = std::max<long>(1, std::min<long>((total + 255) / 256, 8192));
    k_residual<<<static_cast<unsigned>(blocks), 256>>>(bt, x, d0, acc);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUDA_CHECK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(acc);
    throw;
  }
  ADI3D_CUDA_CHECK(cudaFree(acc));
  return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
}

}  // namespace adi3d::tridiag::detail
