#pragma once
// Second-order, conservative 7-point discretisation of div(alpha grad u), written once as
// host/device point rules. Along each axis a node's row is
//   (A_a u)_i = wm (u_{i-1} - u_i) + wp (u_{i+1} - u_i),
// with face conductances wm, wp = alpha_{i-+1/2} / h^2 (face alpha = harmonic mean of the
// two nodes, exact for layered media). A Neumann face node uses the mirrored ghost node
// (the half-cell balance), so wm = 0, wp = 2 alpha_{1/2} / h^2 and the prescribed outward
// derivative g adds 2 alpha_0 g / h. A Dirichlet face node is not an unknown. A Robin face
// node is a Neumann one whose flux is h (u_inf - u): its outward derivative
// g = h (u_inf - u) / alpha_0 adds 2 h (u_inf - u) / h_grid, the explicit part as Neumann
// data from u (Backend::robin_data) and in the implicit rows the diagonal
// beta = 2 h / h_grid (AxisRow::wd), so that the face is as implicit as the interior.
#include "solvers/face_layout.hpp"
#include "solvers/host_device.hpp"
#include "solvers/operator_view.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace adi3d {

ADI3D_HD RowKind row_kind(int i, int n, BoundaryKind lo, BoundaryKind hi) {
  if (lo == BoundaryKind::periodic) return RowKind::interior;
  if (i == 0) return lo == BoundaryKind::dirichlet ? RowKind::dirichlet : RowKind::neumann_lo;
  if (i == n - 1) return hi == BoundaryKind::dirichlet ? RowKind::dirichlet : RowKind::neumann_hi;
  return RowKind::interior;
}

// Neighbour positions along an axis; wrap on periodic axes, clamp otherwise (the clamped
// neighbour always carries a zero weight).
ADI3D_HD int lower_neighbour(int i, int n, bool periodic) {
  return i > 0 ? i - 1 : (periodic ? n - 1 : 0);
}
ADI3D_HD int upper_neighbour(int i, int n, bool periodic) {
  return i < n - 1 ? i + 1 : (periodic ? 0 : n - 1);
}

// The face diffusivity 2 a b / (a + b), as 2 a (b / (a + b)): the mean keeps T's
// precision for every pair of normal diffusivities whose ratio lies in T's range (the
// quotient underflows past it), where the product 2 a b leaves T's range (in float below
// about 1e-19 or above 1e19, e.g. solid-state diffusivities in m^2/s: subnormal, then 0,
// or infinite). Not symmetric to the bit: every face takes its nodes in order (lower,
// upper), so that the rows on its two sides weigh it alike. (Ordering the operands made
// it symmetric at two more instructions a face, and the alpha-field kernels slower: the
// double shuffle stencil 1.33 -> 1.43 ms at 512^3 on an H100.)
template <class T>
ADI3D_HD T harmonic_mean(T a, T b) {
  const T s = a + b;
  return s > T(0) ? T(2) * a * (b / s) : T(0);
}

template <class T>
struct RowWeights {
  T wm;  // weight of the lower neighbour
  T wp;  // weight of the upper neighbour
};

// Weights of the row of node i along one axis, given the diffusivity at the node and at
// its two neighbours (the same value three times for a constant diffusivity); mean(a, b)
// is the face diffusivity (harmonic_mean, a kernel's faster rounding of it, or a lookup
// when A names materials: material_index.hpp).
template <class T, class A, class Mean>
ADI3D_HD RowWeights<T> row_weights_by(Mean mean, RowKind kind, A alpha_m, A alpha_c, A alpha_p, T inv_h2) {
  switch (kind) {
    case RowKind::interior:
      return {mean(alpha_m, alpha_c) * inv_h2, mean(alpha_c, alpha_p) * inv_h2};
    case RowKind::neumann_lo:
      return {T(0), T(2) * mean(alpha_c, alpha_p) * inv_h2};
    case RowKind::neumann_hi:
      return {T(2) * mean(alpha_m, alpha_c) * inv_h2, T(0)};
    default:
      return {T(0), T(0)};
  }
}
template <class T>
ADI3D_HD RowWeights<T> row_weights(RowKind kind, T alpha_m, T alpha_c, T alpha_p, T inv_h2) {
  return row_weights_by([](T a, T b) { return harmonic_mean(a, b); }, kind, alpha_m, alpha_c, alpha_p, inv_h2);
}

// Everything a kernel needs about node (i,j,k) along one axis.
template <class T>
struct AxisRow {
  RowKind kind;
  std::size_t lower;  // flat index of the lower neighbour
  std::size_t upper;  // flat index of the upper neighbour
  RowWeights<T> w;
  T wd = T(0);        // a Robin face's beta = 2 h / h_grid on the implicit diagonal
};

template <class T>
ADI3D_HD T alpha_at(const OperatorView<T>& op, int axis, std::size_t p) {
  return op.alpha_field ? op.alpha_field[p] : op.alpha[axis];
}

// The face-layout index (face_layout.hpp) of grid node p, a node of a face normal to axis.
ADI3D_HD std::size_t face_entry_of(const int n[3], int axis, std::size_t p) {
  const std::size_t nx = static_cast<std::size_t>(n[0]), nxy = nx * static_cast<std::size_t>(n[1]);
  return axis == 0 ? p / nx : axis == 1 ? p % nx + nx * (p / nxy) : p % nxy;
}

// Robin face `face`'s h at its node p (0 where the face is not Robin). (Selects, not
// op.robin_h[face]: a run-time index into a kernel's parameters puts them in local memory.)
template <class T>
ADI3D_HD T robin_h_at(const OperatorView<T>& op, int face, std::size_t p) {
  const T* field = nullptr;
  T h = T(0);
  for (int f = 0; f < 6; ++f) {
    field = f == face ? op.robin_h_field[f] : field;
    h = f == face ? op.robin_h[f] : h;
  }
  return field ? field[face_entry_of(op.n, face / 2, p)] : h;
}

// Whether a face of axis has a Robin h that varies over it (a field).
template <class T>
ADI3D_HD bool robin_field_on_axis(const OperatorView<T>& op, int axis) {
  bool field = false;
  for (int f = 0; f < 6; ++f) field = field || (f / 2 == axis && op.robin_h_field[f]);
  return field;
}

// What the matrix of lines alike along an axis depends on besides tau: shared factors
// are cached under it.
template <class T>
struct LineMatrixKey {
  int n;
  BoundaryKind lo, hi;
  T alpha, inv_h2, robin_lo, robin_hi;
  bool operator==(const LineMatrixKey& o) const {
    return n == o.n && lo == o.lo && hi == o.hi && alpha == o.alpha && inv_h2 == o.inv_h2 &&
           robin_lo == o.robin_lo && robin_hi == o.robin_hi;
  }
  bool operator!=(const LineMatrixKey& o) const { return !(*this == o); }
};
// Shared factors of lines that differ would be those of a line at a stand-in position.
template <class T>
void require_lines_alike(const OperatorView<T>& op, int axis) {
  if (!lines_alike(op, axis))
    throw std::logic_error("shared line factors asked for lines along axis " + std::to_string(axis) +
                           " that differ line by line");
}
template <class T>
LineMatrixKey<T> line_matrix_key(const OperatorView<T>& op, int axis) {
  return {op.n[axis], op.lo[axis], op.hi[axis], op.alpha[axis], op.inv_h2[axis], op.robin_h[2 * axis],
          op.robin_h[2 * axis + 1]};
}

// Whether a face of axis is Robin (h constant or a field).
template <class T>
ADI3D_HD bool robin_axis(const OperatorView<T>& op, int axis) {
  bool robin = false;
  for (int f = 0; f < 6; ++f) robin = robin || (f / 2 == axis && (op.robin_h_field[f] || op.robin_h[f] != T(0)));
  return robin;
}

template <class T>
ADI3D_HD bool has_robin(const OperatorView<T>& op) {
  return robin_axis(op, 0) || robin_axis(op, 1) || robin_axis(op, 2);
}

// Whether the lines along axis all have the same matrix (no alpha field, no Robin h that
// varies over a face of the axis): the shared-factor solvers take only these, and their
// factors call axis_row at stand-in positions.
template <class T>
ADI3D_HD bool lines_alike(const OperatorView<T>& op, int axis) {
  return !op.alpha_field && !robin_field_on_axis(op, axis);
}

template <class T>
ADI3D_HD AxisRow<T> axis_row(const OperatorView<T>& op, int axis, int i, std::size_t p,
                             std::size_t stride) {
  const int n = op.n[axis];
  const bool periodic = op.lo[axis] == BoundaryKind::periodic;
  AxisRow<T> r;
  r.kind = row_kind(i, n, op.lo[axis], op.hi[axis]);
  const int im = lower_neighbour(i, n, periodic);
  const int ip = upper_neighbour(i, n, periodic);
  r.lower = p - static_cast<std::size_t>(i) * stride + static_cast<std::size_t>(im) * stride;
  r.upper = p - static_cast<std::size_t>(i) * stride + static_cast<std::size_t>(ip) * stride;
  r.w = row_weights(r.kind, alpha_at(op, axis, r.lower), alpha_at(op, axis, p),
                    alpha_at(op, axis, r.upper), op.inv_h2[axis]);
  if (r.kind == RowKind::neumann_lo || r.kind == RowKind::neumann_hi)
    r.wd = T(2) * robin_h_at(op, face_index(axis, r.kind == RowKind::neumann_hi ? 1 : 0), p) * op.inv_h[axis];
  return r;
}

// True where the node lies on a Dirichlet face (its value is prescribed).
template <class T>
ADI3D_HD bool is_dirichlet_node(const OperatorView<T>& op, int i, int j, int k) {
  return row_kind(i, op.n[0], op.lo[0], op.hi[0]) == RowKind::dirichlet ||
         row_kind(j, op.n[1], op.lo[1], op.hi[1]) == RowKind::dirichlet ||
         row_kind(k, op.n[2], op.lo[2], op.hi[2]) == RowKind::dirichlet;
}

// Element (a, b) of (I - tau A_axis) w, for w a face array of `face` (face_layout.hpp) and
// `axis` one of the face's tangential axes; identity where the row along `axis` is a
// Dirichlet row. The Douglas step builds its consistent intermediate Dirichlet values
// from it (douglas_step.hpp).
template <class T>
ADI3D_HD T tangential_factor(const OperatorView<T>& op, int face, int axis, T tau, const T* w,
                             int a, int b) {
  const FaceAxes fa = face_axes(face);
  const std::size_t nu = static_cast<std::size_t>(op.n[fa.u]);
  const bool along_u = axis == fa.u;
  const int i = along_u ? a : b;
  const std::size_t stride = axis == 0   ? std::size_t{1}
                             : axis == 1 ? static_cast<std::size_t>(op.n[0])
                                         : static_cast<std::size_t>(op.n[0]) * op.n[1];
  const AxisRow<T> row = axis_row(op, axis, i, face_node(op.n, face, a, b), stride);
  const std::size_t e = a + nu * b;
  if (row.kind == RowKind::dirichlet) return w[e];
  const bool periodic = op.lo[axis] == BoundaryKind::periodic;
  const int im = lower_neighbour(i, op.n[axis], periodic);
  const int ip = upper_neighbour(i, op.n[axis], periodic);
  const std::size_t em = along_u ? im + nu * b : a + nu * im;
  const std::size_t ep = along_u ? ip + nu * b : a + nu * ip;
  return w[e] - tau * (row.w.wm * (w[em] - w[e]) + row.w.wp * (w[ep] - w[e]) - row.wd * w[e]);
}

// The outward derivative g = h (u_inf - u) / alpha that carries Robin face `face`'s flux
// at its node (a, b) as Neumann data (u_inf null: 0).
template <class T>
ADI3D_HD T robin_derivative(const OperatorView<T>& op, int face, const T* u_inf, const T* u, int a, int b) {
  const std::size_t p = face_node(op.n, face, a, b);
  const std::size_t e = a + static_cast<std::size_t>(op.n[face_axes(face).u]) * b;
  const T ambient = u_inf ? u_inf[e] : T(0);
  return robin_h_at(op, face, p) * (ambient - u[p]) / alpha_at(op, face / 2, p);
}

// (A u)_p at an unknown node: the 7-point stencil (a Robin face's flux is data: above).
template <class T>
ADI3D_HD T apply_operator(const OperatorView<T>& op, const T* u, int i, int j, int k) {
  const std::size_t sx = 1, sy = static_cast<std::size_t>(op.n[0]),
                    sz = static_cast<std::size_t>(op.n[0]) * op.n[1];
  const std::size_t p = i + sy * j + sz * k;
  const T uc = u[p];
  T sum = T(0);
  const int idx[3] = {i, j, k};
  const std::size_t stride[3] = {sx, sy, sz};
  for (int a = 0; a < 3; ++a) {
    const AxisRow<T> r = axis_row(op, a, idx[a], p, stride[a]);
    sum += r.w.wm * (u[r.lower] - uc) + r.w.wp * (u[r.upper] - uc);
  }
  return sum;
}

// Tridiagonal row of (I - tau A_axis): identity on Dirichlet rows.
template <class T>
struct TriRow {
  T a, b, c;
};

template <class T>
ADI3D_HD TriRow<T> implicit_row(const AxisRow<T>& r, T tau) {
  if (r.kind == RowKind::dirichlet) return {T(0), T(1), T(0)};
  const T a = -tau * r.w.wm;
  const T c = -tau * r.w.wp;
  return {a, T(1) - a - c + tau * r.wd, c};
}

// The Neumann faces of op whose data (face-layout arrays, null where zero) is given: bit f
// for face f (fold_neumann_terms' faces).
template <class T>
unsigned neumann_data_faces(const OperatorView<T>& op, const T* const* data) {
  unsigned faces = 0;
  for (int f = 0; f < 6; ++f)
    if (data[f] && (f % 2 == 0 ? op.lo[f / 2] : op.hi[f / 2]) == BoundaryKind::neumann) faces |= 1u << f;
  return faces;
}

// Contribution of prescribed outward normal derivatives g on Neumann faces to (A u)_p:
// 2 alpha_p g / h per Neumann face the node lies on.
template <class T>
ADI3D_HD T neumann_term(RowKind kind, T alpha_c, T g, T inv_h) {
  return (kind == RowKind::neumann_lo || kind == RowKind::neumann_hi) ? T(2) * alpha_c * g * inv_h
                                                                      : T(0);
}

}  // namespace adi3d
