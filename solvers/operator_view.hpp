#pragma once
// The discrete diffusion operator A = Ax + Ay + Az as plain data that every backend and
// kernel reads: shape, spacing, diffusivity (constant per axis or a node field) and the
// boundary kind of each face. Point rules live in discretization.hpp.
#include "solvers/boundary.hpp"

namespace adi3d {

template <class T>
struct OperatorView {
  int n[3];
  T inv_h[3];
  T inv_h2[3];
  T alpha[3];             // per-axis diffusivity when alpha_field is null
  const T* alpha_field;   // node diffusivity (x fastest), or null; backend memory
  BoundaryKind lo[3];
  BoundaryKind hi[3];
};

}  // namespace adi3d
