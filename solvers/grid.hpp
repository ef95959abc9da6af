#pragma once
// Uniform vertex-centred grid: nodes x_i = lo + i*h, i = 0..n-1 per axis, x fastest.
#include <array>
#include <cstddef>
#include <cstdint>

namespace adi3d {

struct Grid3 {
  std::array<int, 3> n{};       // nodes per axis
  std::array<double, 3> lo{};   // coordinate of node 0
  std::array<double, 3> h{};    // spacing

  std::size_t size() const {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
  std::size_t index(int i, int j, int k) const {
    return static_cast<std::size_t>(i) +
           static_cast<std::size_t>(n[0]) *
               (static_cast<std::size_t>(j) + static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(k));
  }
  double coord(int axis, int i) const { return lo[axis] + i * h[axis]; }
  // Distance between neighbouring entries along an axis in the flat array.
  std::size_t stride(int axis) const {
    return axis == 0 ? 1 : axis == 1 ? static_cast<std::size_t>(n[0]) : static_cast<std::size_t>(n[0]) * n[1];
  }
};

// Spacing for n nodes on [lo, hi]: the last node sits on hi, except on a periodic axis,
// where node n would be the image of node 0.
inline double grid_spacing(double lo, double hi, int n, bool periodic) {
  return (hi - lo) / (periodic ? n : n - 1);
}

}  // namespace adi3d
