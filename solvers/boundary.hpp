#pragma once
// Boundary types per face, as the solvers see them (no data, no formulas).
#include <array>
#include <string>

namespace adi3d {

// robin: the convective face -alpha du/dn = h (u - u_inf). The kernels see it as a Neumann
// face (OperatorView::robin_h says which and with what h; discretization.hpp).
enum class BoundaryKind { dirichlet, neumann, periodic, robin };

// Faces in the order x-, x+, y-, y+, z-, z+: face = 2*axis + side.
constexpr int face_index(int axis, int side) { return 2 * axis + side; }
const char* face_name(int face);  // "x-", "x+", ...

struct BoundarySpec {
  std::array<BoundaryKind, 6> face{BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                   BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                   BoundaryKind::dirichlet, BoundaryKind::dirichlet};
  BoundaryKind lo(int axis) const { return face[face_index(axis, 0)]; }
  BoundaryKind hi(int axis) const { return face[face_index(axis, 1)]; }
  bool periodic(int axis) const { return lo(axis) == BoundaryKind::periodic; }
  bool has_dirichlet() const;
  bool has_robin() const;
};

// Row kinds of a line of nodes along one axis, as every kernel generates them.
enum class RowKind : int { interior = 0, dirichlet = 1, neumann_lo = 2, neumann_hi = 3 };

}  // namespace adi3d
