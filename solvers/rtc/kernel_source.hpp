#pragma once
// The CUDA C++ source of a formula's sampling kernels, compiled at run time by NVRTC
// (device_function.cpp). Plain C++ so that the text is checked without CUDA.
#include <string>

namespace adi3d::rtc {

// Kernels for `expression` (C++ over doubles x, y, z, t: physics/formula_codegen.hpp) with
// values of type `real` ("float" or "double"):
//   sample_grid: a grid array (x fastest) whose plane k lies at the plane
//     (k + k_first) mod period of a grid (a rank's slab; k_first = 0 and period = nz for a
//     whole grid); out = f, or out = minuend - f where minuend is given; with range, the
//     smallest and largest finite values go there (ordered keys, range_key below);
//   sample_face: one face array (face_layout.hpp).
// Both record the first value of f that is not finite in `real` (index, t, value) in
// non_finite as they write, so that the check costs no pass of its own.
std::string formula_kernels(const std::string& expression, const std::string& real);

// The key under which the kernels record a double for atomicMin/atomicMax on 64-bit words:
// unsigned order of keys is the order of the values (negative values flipped). Shared with
// the host, which decodes the keys (range_value).
unsigned long long range_key(double v);
double range_value(unsigned long long key);

}  // namespace adi3d::rtc
