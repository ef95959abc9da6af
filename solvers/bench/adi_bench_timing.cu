// Event timing, device copies and random fills on a CUDA backend's stream, for
// `adi3d bench adi` (adi_bench.hpp). The random fill hashes (seed, index) with splitmix64:
// 1 write per point, no host pass, different data for every seed.
#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/backend_cast.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/event_timer.cuh"

#include <algorithm>
#include <cstdint>

namespace adi3d::cuda {
namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <class T>
__global__ void fill_random_kernel(T* __restrict__ x, std::size_t n, unsigned seed, double lo, double span) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = splitmix64((static_cast<std::uint64_t>(seed) << 40) ^ e);
    const double unit = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    x[e] = static_cast<T>(lo + span * unit);
  }
}

}  // namespace

template <class T>
double median_ms(Backend<T>& backend, int warmup, int repetitions, const std::function<void()>& op, int calls) {
  const cudaStream_t stream = cuda_backend_of(backend).stream();
  return EventTimer().median_ms(stream, warmup, repetitions, op, {}, calls);
}

template <class T>
double timed_ms(Backend<T>& backend, const std::function<void()>& op) {
  return EventTimer().time_ms(cuda_backend_of(backend).stream(), op);
}

template <class T>
void device_copy(Backend<T>& backend, T* dst, const T* src, std::size_t n) {
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice,
                                   cuda_backend_of(backend).stream()));
}

template <class T>
void fill_random(Backend<T>& backend, T* x, std::size_t n, unsigned seed, double lo, double hi) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535));
  fill_random_kernel<T><<<blocks, 256, 0, cuda_backend_of(backend).stream()>>>(x, n, seed, lo, hi - lo);
  ADI3D_CUDA_LAUNCH_CHECK();
}

#define ADI3D_INSTANTIATE(T)                                                                    \
  template double median_ms<T>(Backend<T>&, int, int, const std::function<void()>&, int);      \
  template double timed_ms<T>(Backend<T>&, const std::function<void()>&);                       \
  template void device_copy<T>(Backend<T>&, T*, const T*, std::size_t);                         \
  template void fill_random<T>(Backend<T>&, T*, std::size_t, unsigned, double, double);
ADI3D_INSTANTIATE(float)
ADI3D_INSTANTIATE(double)
#undef ADI3D_INSTANTIATE

}  // namespace adi3d::cuda
