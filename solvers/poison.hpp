#pragma once
// A test switch against results that depend on memory nobody wrote (issue 44):
// ADI3D_POISON=nan or ADI3D_POISON=big fills every backend allocation (device arrays, the
// CPU backend's arrays, pinned and host staging buffers, the line solvers' and the
// tridiagonal library's stream-ordered workspace) with one byte pattern when it is
// allocated and again before it goes back to a pool. A kernel that reads such memory and
// lets it reach a result then fails its test instead of passing by luck.
//
// The patterns are bytes, so one memset serves every element type:
//   nan: 0xFF bytes, a NaN as float and as double (and 255 as a material index byte);
//   big: 0x7E bytes, 8.5e37 as float and 2.0e301 as double: finite, but any product of two
//        of them overflows, so a garbage value multiplied by a zero weight still shows.
// Off (unset or empty) costs one branch per allocation.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d {

enum class Poison { off, nan, big };

// The setting of ADI3D_POISON, read once per process. Anything but nan, big or empty is an
// error that names the variable, so that a mistyped switch never silently tests nothing.
inline Poison poison_setting() {
  static const Poison setting = [] {
    const char* v = std::getenv("ADI3D_POISON");
    const std::string value = v ? v : "";
    if (value.empty()) return Poison::off;
    if (value == "nan") return Poison::nan;
    if (value == "big") return Poison::big;
    throw std::invalid_argument("ADI3D_POISON='" + value + "': expected nan, big or nothing");
  }();
  return setting;
}

inline int poison_byte(Poison p) { return p == Poison::nan ? 0xFF : 0x7E; }

// Fills host memory with the pattern when the switch is on.
inline void poison_host(void* p, std::size_t bytes) {
  const Poison setting = poison_setting();
  if (setting != Poison::off && p && bytes) std::memset(p, poison_byte(setting), bytes);
}

// Scratch of a CPU kernel: value-initialised normally, poisoned under the switch (so that a
// kernel that reads scratch before writing it cannot rely on the zeros).
template <class T>
std::vector<T> scratch_vector(std::size_t n) {
  std::vector<T> v(n);
  poison_host(v.data(), n * sizeof(T));
  return v;
}

}  // namespace adi3d
