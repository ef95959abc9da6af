#pragma once
// Point rules of the direct solve (spectral_solve.hpp), shared by the CPU and CUDA
// implementations: each axis's weight and each z row, from the operator's own rules
// (discretization.hpp), so that the solve inverts exactly the rows operator_rhs applies.
#include "solvers/discretization.hpp"
#include "solvers/spectral_solve.hpp"

namespace adi3d {

// The unknown nodes of an axis: [first, first + count).
struct SpectralRange {
  int first;
  int count;
};
ADI3D_HD SpectralRange unknown_range(int n, BoundaryKind lo, BoundaryKind hi) {
  const int first = lo == BoundaryKind::dirichlet ? 1 : 0;
  const int last = hi == BoundaryKind::dirichlet ? n - 2 : n - 1;
  return {first, last - first + 1};
}

// An interior row's weight alpha_{i+1/2} / h^2 along x or y, as the operator rounds it: with
// alpha constant per axis; over layers (alpha a function of z alone) 1 / h^2, the plane's
// alpha joining as SpectralZRow::scale (the harmonic mean of two equal values is the value,
// exactly, so each plane's x and y rows are those of its alpha).
template <class T>
ADI3D_HD T axis_weight(const OperatorView<T>& op, int axis, bool layered) {
  if (layered) return op.inv_h2[axis];
  return row_weights(RowKind::interior, op.alpha[axis], op.alpha[axis], op.alpha[axis], op.inv_h2[axis]).wp;
}

// Row k of -A_z - scale (lambda_x + lambda_y) at an unknown plane k: -lower e_{k-1} +
// (diag + scale sigma) e_k - upper e_{k+1}, sigma the mode's x and y eigenvalues (of
// axis_weight), the neighbours wrapped on a periodic axis; the weight towards a Dirichlet
// plane is dropped (that plane holds 0 in e); a Robin z face's row carries its beta (its
// flux's part in u, which the residual takes from u: the system solved is the steady
// one). layers: alpha on each plane (null: op's constants), whose z faces take the
// operator's harmonic means.
template <class T>
struct SpectralZRow {
  T lower;
  T diag;
  T upper;
  T scale;
};
template <class T>
ADI3D_HD SpectralZRow<T> spectral_z_row(const OperatorView<T>& op, int k, const T* layers = nullptr) {
  const int n = op.n[2];
  const BoundaryKind lo = op.lo[2], hi = op.hi[2];
  const bool periodic = lo == BoundaryKind::periodic;
  const int km = lower_neighbour(k, n, periodic), kp = upper_neighbour(k, n, periodic);
  const T a = layers ? layers[k] : op.alpha[2];
  const T am = layers ? layers[km] : a, ap = layers ? layers[kp] : a;
  const RowKind kind = row_kind(k, n, lo, hi);
  const RowWeights<T> w = row_weights(kind, am, a, ap, op.inv_h2[2]);
  const bool lower_fixed = row_kind(km, n, lo, hi) == RowKind::dirichlet;
  const bool upper_fixed = row_kind(kp, n, lo, hi) == RowKind::dirichlet;
  // A Robin face's beta = 2 h / h_grid on its end row (axis_row's wd; 0 on other faces).
  const T beta = kind == RowKind::neumann_lo   ? T(2) * op.robin_h[4] * op.inv_h[2]
                 : kind == RowKind::neumann_hi ? T(2) * op.robin_h[5] * op.inv_h[2]
                                               : T(0);
  return {lower_fixed ? T(0) : w.wm, w.wm + w.wp + beta, upper_fixed ? T(0) : w.wp, layers ? a : T(1)};
}

// Eigenvalue of the x or y part of -A at stored index i of the CPU's real transforms (FFTW's
// RODFT00 and REDFT00 keep mode k at node k; R2HC keeps wavenumbers k and n - k at k).
ADI3D_HD double stored_mode_eigenvalue(SpectralAxis kind, double w, int i, int n) {
  const int period = spectral_period(kind, n);
  const int k = kind == SpectralAxis::fourier && i > n / 2 ? n - i : i;
  return spectral_eigenvalue(w, k, period);
}

// Whether the z systems of wavenumbers (0, 0) are singular: no Dirichlet face on z and no
// Robin z face with h > 0 (Robin faces reach the direct solve on z only).
template <class T>
ADI3D_HD bool z_lines_singular(const OperatorView<T>& op) {
  return op.lo[2] != BoundaryKind::dirichlet && op.hi[2] != BoundaryKind::dirichlet && op.robin_h[4] == T(0) &&
         op.robin_h[5] == T(0);
}

// Whether -A is singular: z_lines_singular and no Dirichlet face on x or y. Its null space
// is the constant, mode (0, 0) of a cosine or fourier x and y.
template <class T>
ADI3D_HD bool spectral_singular(const OperatorView<T>& op) {
  for (int a = 0; a < 2; ++a)
    if (op.lo[a] == BoundaryKind::dirichlet || op.hi[a] == BoundaryKind::dirichlet) return false;
  return z_lines_singular(op);
}

}  // namespace adi3d
