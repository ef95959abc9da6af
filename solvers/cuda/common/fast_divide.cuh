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

#include <limits>
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

// w times that mean for diffusivities a, b >= 0 (the weight of the face between them), as
// (a (b / (a + b))) (2 w): the same bits as the mean times w (2 w is exact), one multiply
// fewer, and no test for a + b = 0, whose reciprocal is kept finite by a floor at T's
// least normal number instead (b / (a + b) is then 0). The float y/z tiles' faces
// (yz_var_kernel; 512^3, H100, bench gpu, two runs each, with the x lines' faces so too:
// plain y 0.684 -> 0.674-0.679 ms, z 0.715 -> 0.702-0.705, the alpha step 2.154-2.161 ->
// 2.122-2.132). The stencils' faces keep harmonic_mean_fast times the axis weight: with
// this form their kernels held 2 w in registers (the double shuffle stencil 56 -> 68,
// fewer blocks an SM) and ran slower (float alpha planes 0.620 -> 0.632 ms, double
// shuffle 1.345 -> 1.557); so do the x lines (their registers rose by up to a third, at no
// gain: float x 0.578 -> 0.576 ms).
template <class T>
__device__ __forceinline__ T weighted_harmonic_mean(T a, T b, T two_w) {
  const T s = fmax(a + b, std::numeric_limits<T>::min());
  return a * divide(b, s) * two_w;
}

}  // namespace adi3d::cuda
