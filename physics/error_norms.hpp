#pragma once
// Errors of a computed field against an exact solution: the grid L2 norm
// sqrt(sum e^2 / N) and the max norm.
#include "solvers/backend.hpp"

#include <cmath>

namespace adi3d::physics {

struct ErrorNorms {
  double l2 = 0;
  double max = 0;
};

inline ErrorNorms to_error_norms(const Norms& n, std::size_t count) {
  return {std::sqrt(n.sum_squares / static_cast<double>(count)), n.max_abs};
}

}  // namespace adi3d::physics
