#pragma once
// A norm of data that holds a NaN is NaN. Sums carry it (NaN + x is NaN), but every max
// reduction drops it (std::max, fmax, OpenMP's and MPI's max), so a field gone NaN had
// reported "max error 0". Each backend's difference_norms passes its result through here.
#include "solvers/backend.hpp"

#include <cmath>
#include <limits>

namespace adi3d {

inline Norms propagate_nan(Norms n) {
  if (std::isnan(n.sum_abs)) n.max_abs = std::numeric_limits<double>::quiet_NaN();
  return n;
}

}  // namespace adi3d
