#include "solvers/rtc/kernel_source.hpp"

#include <cstdint>
#include <cstring>

namespace adi3d::rtc {
namespace {

// The key's rule in the kernels' own words (range_key, on the device).
constexpr const char* kDeviceRangeKey = R"(
__device__ unsigned long long range_key(double v) {
  const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
  return (bits >> 63) ? ~bits : bits | 0x8000000000000000ull;
}
)";

}  // namespace

unsigned long long range_key(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits >> 63) ? ~bits : bits | 0x8000000000000000ull;
}

double range_value(unsigned long long key) {
  const std::uint64_t bits = (key >> 63) ? key & ~0x8000000000000000ull : ~key;
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The expression is written once, in formula(); samplings call it. Each sampling records the
// first non-finite value by compare-and-swap on a word that stays at ~0 while all is well, and
// samplings run in stream order, so the earliest bad sampling's node is the one kept. The
// range is reduced over each warp before its atomics, and the launches that ask for it take
// several rows per block (device_function.cpp), so that few atomics reach each word.
std::string formula_kernels(const std::string& expression, const std::string& real) {
  return "typedef " + real + " real;\n" +
         "__device__ __forceinline__ double formula(double x, double y, double z, double t) {\n  return (" +
         expression + ");\n}\n" + kDeviceRangeKey + R"(
__device__ void record_non_finite(unsigned long long* non_finite, size_t index, double t, real v) {
  if (isfinite(v)) return;
  if (atomicCAS(non_finite, ~0ull, (unsigned long long)index) == ~0ull) {
    non_finite[1] = (unsigned long long)__double_as_longlong(t);
    non_finite[2] = (unsigned long long)__double_as_longlong((double)v);
  }
}
__device__ void record_range(unsigned long long* range, double lo, double hi) {
  for (int offset = 16; offset > 0; offset /= 2) {
    lo = fmin(lo, __shfl_down_sync(0xffffffffu, lo, offset));
    hi = fmax(hi, __shfl_down_sync(0xffffffffu, hi, offset));
  }
  if ((threadIdx.x & 31) != 0 || lo > hi) return;
  atomicMin(range, range_key(lo));
  atomicMax(range + 1, range_key(hi));
}
extern "C" __global__ void sample_grid(real* out, const real* minuend, int nx, int ny, int nz, double x0,
                                       double y0, double z0, double hx, double hy, double hz, int k_first,
                                       int period, double t, unsigned long long* non_finite,
                                       unsigned long long* range) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const double inf = __longlong_as_double(0x7ff0000000000000ll);  // NVRTC has no <cmath>
  double lo = inf, hi = -inf;
  // No early return: the range's warp reduction needs every lane.
  if (i < nx)
    for (int k = blockIdx.z; k < nz; k += gridDim.z) {
      int kw = k + k_first;
      kw = kw < 0 ? kw + period : kw >= period ? kw - period : kw;
      for (int j = blockIdx.y; j < ny; j += gridDim.y) {
        // Rounded exactly like the host's lo + i*h (no FMA contraction), so a formula with a
        // discontinuity at a node picks the same side on both.
        const double x = __dadd_rn(x0, __dmul_rn(i, hx)), y = __dadd_rn(y0, __dmul_rn(j, hy)),
                     z = __dadd_rn(z0, __dmul_rn(kw, hz));
        const size_t index = i + (size_t)nx * (j + (size_t)ny * k);
        const double f = formula(x, y, z, t);
        const real v = (real)f;
        out[index] = minuend ? (real)((double)minuend[index] - f) : v;
        record_non_finite(non_finite, index, t, v);
        if (isfinite(v)) {
          lo = fmin(lo, (double)v);
          hi = fmax(hi, (double)v);
        }
      }
    }
  if (range) record_range(range, lo, hi);
}
extern "C" __global__ void sample_face(real* out, int nu, int nv, int axis, int ua, int va,
                                       double normal, double u0, double hu, double v0, double hv,
                                       double t, unsigned long long* non_finite) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= nu) return;
  for (int b = blockIdx.y; b < nv; b += gridDim.y) {
    double p[3];
    p[axis] = normal;
    p[ua] = __dadd_rn(u0, __dmul_rn(a, hu));
    p[va] = __dadd_rn(v0, __dmul_rn(b, hv));
    const size_t index = a + (size_t)nu * b;
    const real v = (real)formula(p[0], p[1], p[2], t);
    out[index] = v;
    record_non_finite(non_finite, index, t, v);
  }
}
)";
}

}  // namespace adi3d::rtc
