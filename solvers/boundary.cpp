#include "solvers/boundary.hpp"

namespace adi3d {

const char* face_name(int face) {
  static const char* const names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return (face >= 0 && face < 6) ? names[face] : "?";
}

bool BoundarySpec::has_dirichlet() const {
  for (BoundaryKind k : face)
    if (k == BoundaryKind::dirichlet) return true;
  return false;
}

bool BoundarySpec::has_robin() const {
  for (BoundaryKind k : face)
    if (k == BoundaryKind::robin) return true;
  return false;
}

}  // namespace adi3d
