#pragma once
// Division for the alpha-field kernels of the CUDA backend: their dependent chains of
// divisions (pivots, harmonic means of diffusivities), not memory, bound them. In float,
// the hardware reciprocal (__fdividef: within 2 ulp for |b| in [2^-126, 2^126], and no
// slow path for IEEE rounding); pivots and harmonic means of positive diffusivities lie
// far inside that range. Double keeps IEEE division.
#include <cuda_runtime.h>

#include <type_traits>

namespace adi3d::cuda {

template <class T>
__device__ __forceinline__ T divide(T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return __fdividef(a, b);
  else
    return a / b;
}

template <class T>
__device__ __forceinline__ T reciprocal(T x) {
  return divide(T(1), x);
}

// harmonic_mean of discretization.hpp (the face diffusivity between two nodes) by divide.
template <class T>
__device__ __forceinline__ T harmonic_mean_fast(T a, T b) {
  const T s = a + b;
  return s > T(0) ? divide(T(2) * a * b, s) : T(0);
}

}  // namespace adi3d::cuda
