#pragma once
// Point rules of the GPU's direct solve (solvers/cuda/spectral/spectral_solve.cu), as
// host/device functions so that the host can run them too (tests/unit/test_spectral_modes.cpp
// runs them around FFTW's r2c and c2r, which lay data out as cuFFT's R2C and C2R do).
// Each unknown z plane is extended along x and y to its transform's period (odd across
// Dirichlet faces, even across Neumann ones, as is along periodic axes) and transformed by
// a real-to-complex FFT; every complex mode is then a tridiagonal system along z.
#include "solvers/spectral_rows.hpp"

#include <cstddef>
#include <vector>

namespace adi3d {

struct SpectralGeometry {
  int n[3];
  SpectralAxis kind[2];
  int period[2];
  int complex_row;  // period[0] / 2 + 1 complex values per extended row
  int real_row;     // 2 complex_row: the in-place transform's padded real row
  SpectralRange range[3];
  bool z_singular;  // z_lines_singular: the mode of wavenumbers (0, 0) is singular along z
  bool z_periodic;
};

template <class T>
SpectralGeometry spectral_geometry(const OperatorView<T>& op) {
  BoundarySpec bc;
  for (int a = 0; a < 3; ++a) bc.face[2 * a] = op.lo[a], bc.face[2 * a + 1] = op.hi[a];
  SpectralGeometry g{};
  for (int a = 0; a < 3; ++a) {
    g.n[a] = op.n[a];
    g.range[a] = unknown_range(op.n[a], op.lo[a], op.hi[a]);
  }
  for (int a = 0; a < 2; ++a) {
    g.kind[a] = spectral_axis(bc, a);
    g.period[a] = spectral_period(g.kind[a], op.n[a]);
  }
  g.complex_row = g.period[0] / 2 + 1;
  g.real_row = 2 * g.complex_row;
  g.z_singular = z_lines_singular(op);
  g.z_periodic = op.lo[2] == BoundaryKind::periodic;
  return g;
}

// The node and sign that position t of an axis's period holds.
struct Mirror {
  int node;
  int sign;
};
ADI3D_HD Mirror mirror(SpectralAxis kind, int t, int n) {
  if (kind == SpectralAxis::fourier || t <= n - 1) return {t, 1};
  return {2 * (n - 1) - t, kind == SpectralAxis::sine ? -1 : 1};
}

// The z rows as the mode solve reads them: lower, diag, upper, scale per plane
// (spectral_z_row), 4 values a plane.
template <class T>
void spectral_row_table(const OperatorView<T>& op, const T* layers, T* rows) {
  for (int k = 0; k < op.n[2]; ++k) {
    const SpectralZRow<T> z = spectral_z_row(op, k, layers);
    rows[4 * k] = z.lower, rows[4 * k + 1] = z.diag, rows[4 * k + 2] = z.upper, rows[4 * k + 3] = z.scale;
  }
}

// The tridiagonal system along z of one mode, -A_z + scale_k sigma (sigma the mode's x and
// y eigenvalues), on each of its C components (2: a complex mode, 1: a real one), solved in
// place: v holds the mode's components on the first unknown plane, the next plane `stride`
// values on. cp, q: a value per mode and plane at [modes kk + m] (the pivots, and on a
// periodic z Sherman-Morrison's second solution). A pinned mode (the (0, 0) mode of a z
// without Dirichlet faces, singular) has its first plane held at 0 (the dropped row is the
// compatibility the caller's shift met).
template <int C, class T>
ADI3D_HD void solve_z_line(T* v, std::size_t stride, T* cp, T* q, std::size_t modes, std::size_t m, const T* rows,
                           const SpectralGeometry& g, T sigma, bool pinned) {
  const int k0 = g.range[2].first, mz = g.range[2].count;
  const T* row0 = rows + 4 * k0;
  // Plane kk's pivot: its diagonal with the mode's eigenvalues (times its alpha over layers).
  auto pivot_of = [&](int kk) { return row0[4 * kk + 1] + row0[4 * kk + 3] * sigma; };

  const bool cyclic = g.z_periodic && !pinned;
  const int first = pinned ? 1 : 0;
  // Thomas; on a periodic z the ends of Sherman-Morrison's T' (as the CPU's solve_cyclic:
  // corners -lower_0 and -upper_last, gamma = -b_0) and the second right-hand side p in q.
  const T b0 = pivot_of(0);
  const T gamma = -b0;
  // Each plane's values are loaded an iteration ahead: on the GPU a thread's loads then
  // overlap its arithmetic and stores instead of waiting one after another.
  T prev[C] = {}, cur[C], q_prev = 0, c_prev = 0;
  for (int p = 0; p < C; ++p) cur[p] = first < mz ? v[stride * first + p] : T(0);
  for (int kk = first; kk < mz; ++kk) {
    T* x = v + stride * kk;
    T next[C] = {};
    if (kk + 1 < mz)
      for (int p = 0; p < C; ++p) next[p] = x[stride + p];
    const T lower = kk == first ? T(0) : row0[4 * kk];
    const T upper = kk == mz - 1 ? T(0) : row0[4 * kk + 2];
    T b = pivot_of(kk);
    if (cyclic && kk == 0) b -= gamma;
    if (cyclic && kk == mz - 1) b += row0[0] * row0[4 * kk + 2] / b0;
    const T id = T(1) / (b + lower * c_prev);
    const T c = -upper * id;
    for (int p = 0; p < C; ++p) {
      x[p] = prev[p] = (cur[p] + lower * prev[p]) * id;
      cur[p] = next[p];
    }
    cp[modes * kk + m] = c;
    c_prev = c;
    if (cyclic) {
      const T p = kk == 0 ? gamma : kk == mz - 1 ? -row0[4 * kk + 2] : T(0);
      q_prev = (p + lower * q_prev) * id;
      q[modes * kk + m] = q_prev;
    }
  }
  T q_next = q_prev, c_cur = 0;
  if (mz - 2 >= first) {
    for (int p = 0; p < C; ++p) cur[p] = v[stride * (mz - 2) + p];
    c_cur = cp[modes * (mz - 2) + m];
  }
  for (int kk = mz - 2; kk >= first; --kk) {
    T* x = v + stride * kk;
    T next[C] = {}, c_next = 0;
    if (kk - 1 >= first) {
      for (int p = 0; p < C; ++p) next[p] = x[p - static_cast<std::ptrdiff_t>(stride)];
      c_next = cp[modes * (kk - 1) + m];
    }
    const T c = c_cur;
    for (int p = 0; p < C; ++p) {
      x[p] = prev[p] = cur[p] - c * prev[p];
      cur[p] = next[p];
    }
    c_cur = c_next;
    if (cyclic) {
      q_next = q[modes * kk + m] - c * q_next;
      q[modes * kk + m] = q_next;
    }
  }
  if (pinned) {
    for (int p = 0; p < C; ++p) v[p] = T(0);
    return;
  }
  if (!cyclic) return;
  // e = y - (v.y / (1 + v.q)) q with v = (1, 0..0, -lower_0 / gamma).
  const T tail = -row0[0] / gamma;
  const T* last = v + stride * (mz - 1);
  const T denom = T(1) + q[m] + tail * q[modes * (mz - 1) + m];
  T f[C];
  for (int p = 0; p < C; ++p) f[p] = (v[p] + tail * last[p]) / denom;
  for (int kk = 0; kk < mz; ++kk) {
    T* x = v + stride * kk;
    const T qk = q[modes * kk + m];
    for (int p = 0; p < C; ++p) x[p] -= f[p] * qk;
  }
}

// What every mode's z solve needs of the operator: the geometry, the x and y weights and the
// z rows (layers: alpha on each plane, or null).
template <class T>
struct SpectralSystems {
  SpectralGeometry g;
  double wx, wy;
  std::vector<T> rows;
};
template <class T>
SpectralSystems<T> spectral_systems(const OperatorView<T>& op, const T* layers) {
  SpectralSystems<T> s{spectral_geometry(op), axis_weight(op, 0, layers != nullptr),
                       axis_weight(op, 1, layers != nullptr), std::vector<T>(4 * static_cast<std::size_t>(op.n[2]))};
  spectral_row_table(op, layers, s.rows.data());
  return s;
}

// Mode m of the transformed planes (complex values at buf + 2 m, planes 2 modes apart):
// its z system (solve_z_line) on its real and imaginary parts.
template <class T>
ADI3D_HD void solve_mode_line(T* buf, T* cp, T* q, const T* rows, const SpectralGeometry& g, double wx, double wy,
                              std::size_t m) {
  const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
  const int kx = static_cast<int>(m % g.complex_row), ky = static_cast<int>(m / g.complex_row);
  const T sigma = static_cast<T>(spectral_eigenvalue(wx, kx, g.period[0]) + spectral_eigenvalue(wy, ky, g.period[1]));
  solve_z_line<2>(buf + 2 * m, 2 * modes, cp, q, modes, m, rows, g, sigma, g.z_singular && kx == 0 && ky == 0);
}

// Position (t, s) of transformed plane kk in the padded real layout.
ADI3D_HD std::size_t extension_index(const SpectralGeometry& g, int t, int s, int kk) {
  return (static_cast<std::size_t>(kk) * g.period[1] + s) * g.real_row + t;
}

}  // namespace adi3d
