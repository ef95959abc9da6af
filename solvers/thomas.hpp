#pragma once
// Thomas algorithm (Gaussian elimination without pivoting) for one tridiagonal system,
// and its cyclic variant by Sherman-Morrison, as host/device functions. Stable for the
// diagonally dominant systems ADI produces. Row i reads a[i] x[i-1] + b[i] x[i] +
// c[i] x[i+1] = d[i]; a[0] and c[n-1] are the cyclic corner entries (ignored unless
// cyclic). Arrays are read with a stride so one routine serves any line direction.
#include "solvers/host_device.hpp"

#include <cstddef>

namespace adi3d {

// Solves in place: d holds the right-hand side on entry and x on exit. cp is scratch of
// n entries (same stride).
template <class T>
ADI3D_HD void thomas_solve(int n, const T* a, const T* b, const T* c, T* d, T* cp,
                           std::size_t s = 1) {
  T inv = T(1) / b[0];
  cp[0] = c[0] * inv;
  d[0] = d[0] * inv;
  for (int i = 1; i < n; ++i) {
    const std::size_t p = i * s, q = (i - 1) * s;
    inv = T(1) / (b[p] - a[p] * cp[q]);
    cp[p] = c[p] * inv;
    d[p] = (d[p] - a[p] * d[q]) * inv;
  }
  for (int i = n - 2; i >= 0; --i) d[i * s] -= cp[i * s] * d[(i + 1) * s];
}

// Sherman-Morrison for a cyclic system: with gamma = -b[0], solve the tridiagonal system
// whose first and last diagonal entries are modified (modify_row) for the right-hand side
// and for u = (gamma, 0, ..., 0, c[n-1]), then x = y - factor(y, z) z. Shared by the CPU
// solver below and every GPU line-solve kernel.
template <class T>
struct CyclicCorrection {
  T gamma;  // -b[0]
  T alpha;  // a[0]: couples row 0 to x[n-1]
  T beta;   // c[n-1]: couples row n-1 to x[0]

  ADI3D_HD static CyclicCorrection from_corners(T a0, T b0, T c_last) { return {-b0, a0, c_last}; }
  // Row m's modified diagonal entry, and its entry of u.
  ADI3D_HD void modify_row(int m, int n, T& b, T& u) const {
    u = T(0);
    if (m == 0) {
      b -= gamma;
      u = gamma;
    }
    if (m == n - 1) {
      b -= alpha * beta / gamma;
      u = beta;
    }
  }
  // y0, y_last and z0, z_last: first and last entries of the two solutions.
  ADI3D_HD T factor(T y0, T y_last, T z0, T z_last) const {
    return (y0 + alpha * y_last / gamma) / (T(1) + z0 + alpha * z_last / gamma);
  }
};

// Cyclic system (n >= 3) by Sherman-Morrison: two Thomas solves with a modified first and
// last diagonal entry. bb and z are scratch of n entries each.
template <class T>
ADI3D_HD void cyclic_thomas_solve(int n, const T* a, const T* b, const T* c, T* d, T* cp,
                                  T* bb, T* z, std::size_t s = 1) {
  const std::size_t last = (n - 1) * s;
  const CyclicCorrection<T> sm = CyclicCorrection<T>::from_corners(a[0], b[0], c[last]);
  for (int i = 0; i < n; ++i) {
    bb[i * s] = b[i * s];
    sm.modify_row(i, n, bb[i * s], z[i * s]);
  }
  thomas_solve(n, a, bb, c, d, cp, s);
  thomas_solve(n, a, bb, c, z, cp, s);
  const T factor = sm.factor(d[0], d[last], z[0], z[last]);
  for (int i = 0; i < n; ++i) d[i * s] -= factor * z[i * s];
}

}  // namespace adi3d
