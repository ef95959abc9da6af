#pragma once
// With a constant diffusivity every line along an axis has the same matrix
// (I - tau A_axis), so its LU factors are computed once per (axis, tau) and each line
// solve is two multiply-add sweeps with no division. Cyclic (periodic) axes add the
// Sherman-Morrison correction vector, also computed once. Plain C++: the CPU backend's
// line solves sweep with them, and the CUDA warp solve takes its cyclic lines' factors and
// correction from them (fused_pass_factors.hpp), so both solve the same modified system.
#include "solvers/discretization.hpp"

#include <vector>

namespace adi3d {

template <class T>
struct LineFactors {
  int n = 0;
  std::vector<T> a;    // sub-diagonal
  std::vector<T> cp;   // c[m] / pivot[m]
  std::vector<T> inv;  // 1 / pivot[m]
  bool cyclic = false;
  std::vector<T> z;    // (modified T)^{-1} u of Sherman-Morrison
  T corner_ratio = 0;  // alpha / gamma
  T denominator = 1;   // 1 + z[0] + corner_ratio z[n-1]
};

template <class T>
LineFactors<T> factor_line(const OperatorView<T>& op, int axis, T tau) {
  require_lines_alike(op, axis);
  LineFactors<T> f;
  const int n = op.n[axis];
  f.n = n;
  f.cyclic = op.lo[axis] == BoundaryKind::periodic;
  std::vector<T> b(n), c(n);
  f.a.resize(n);
  for (int m = 0; m < n; ++m) {
    // Constant coefficients: the row depends only on the position along the axis.
    const TriRow<T> row = implicit_row(axis_row(op, axis, m, static_cast<std::size_t>(m), 1), tau);
    f.a[m] = row.a;
    b[m] = row.b;
    c[m] = row.c;
  }
  const T gamma = -b[0];
  if (f.cyclic) {
    f.corner_ratio = f.a[0] / gamma;
    b[n - 1] -= f.a[0] * c[n - 1] / gamma;
    b[0] -= gamma;
  }
  f.cp.resize(n);
  f.inv.resize(n);
  f.inv[0] = T(1) / b[0];
  f.cp[0] = c[0] * f.inv[0];
  for (int m = 1; m < n; ++m) {
    f.inv[m] = T(1) / (b[m] - f.a[m] * f.cp[m - 1]);
    f.cp[m] = c[m] * f.inv[m];
  }
  if (f.cyclic) {
    f.z.assign(n, T(0));
    f.z[0] = gamma;
    f.z[n - 1] = c[n - 1];
    f.z[0] *= f.inv[0];
    for (int m = 1; m < n; ++m) f.z[m] = (f.z[m] - f.a[m] * f.z[m - 1]) * f.inv[m];
    for (int m = n - 2; m >= 0; --m) f.z[m] -= f.cp[m] * f.z[m + 1];
    f.denominator = T(1) + f.z[0] + f.corner_ratio * f.z[n - 1];
  }
  return f;
}

}  // namespace adi3d
