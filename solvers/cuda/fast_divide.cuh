#pragma once
// Division for the alpha-field kernels of the CUDA backend: their dependent chains of
// divisions (pivots, harmonic means of diffusivities), not memory, bound them. In float,
// the hardware reciprocal alone (rcp.approx.ftz.f32: within 1 ulp, subnormals flushed; no
// slow path for IEEE rounding). __fdividef wrapped the same MUFU.RCP in a subnormal test
// and a rescale, five instructions for one: a sixth of the material y tile's (sm_90 SASS,
// 512^3 float: 38 reciprocals in a line's 897 instructions). In double, the hardware's
// reciprocal seed (rcp.approx.ftz.f64, good to about 2^-22) and one third-order Newton
// step (relative error e -> e^3, so the seed's error leaves nothing and the result is
// within about 2 ulp), where IEEE division adds a correction step, a range check and a
// slow-path branch to every link of the chains (512^3, H100: fused variable step 8.46 ->
// 6.84 ms). Both hold for |b| among T's normal numbers (float [2^-126, 2^126], double
// [2^-1022, 2^1022]); pivots and harmonic means of positive diffusivities lie far inside.
#include <cuda_runtime.h>

#include <type_traits>

namespace adi3d::cuda {

template <class T>
__device__ __forceinline__ T reciprocal(T x) {
  if constexpr (std::is_same_v<T, float>) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
  } else {
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    const double e = fma(-x, r, 1.0);
    return fma(fma(e, e, e), r, r);
  }
}

template <class T>
__device__ __forceinline__ T divide(T a, T b) {
  return a * reciprocal(b);
}

// harmonic_mean of discretization.hpp (the face diffusivity between two nodes, 2 a (b /
// (a + b)): in T's range wherever a, b and their ratio are; nodes in order lower, upper)
// by divide.
template <class T>
__device__ __forceinline__ T harmonic_mean_fast(T a, T b) {
  const T s = a + b;
  return s > T(0) ? T(2) * a * divide(b, s) : T(0);
}

}  // namespace adi3d::cuda
