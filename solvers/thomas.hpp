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

// Cyclic system (n >= 3) by Sherman-Morrison: two Thomas solves with a modified first and
// last diagonal entry. bb and z are scratch of n entries each.
template <class T>
ADI3D_HD void cyclic_thomas_solve(int n, const T* a, const T* b, const T* c, T* d, T* cp,
                                  T* bb, T* z, std::size_t s = 1) {
  const std::size_t last = (n - 1) * s;
  const T gamma = -b[0];
  const T alpha = a[0];       // couples row 0 to x[n-1]
  const T beta = c[last];     // couples row n-1 to x[0]
  for (int i = 0; i < n; ++i) bb[i * s] = b[i * s];
  bb[0] = b[0] - gamma;
  bb[last] = b[last] - alpha * beta / gamma;
  for (int i = 0; i < n; ++i) z[i * s] = T(0);
  z[0] = gamma;
  z[last] = beta;
  thomas_solve(n, a, bb, c, d, cp, s);
  thomas_solve(n, a, bb, c, z, cp, s);
  const T factor = (d[0] + alpha * d[last] / gamma) / (T(1) + z[0] + alpha * z[last] / gamma);
  for (int i = 0; i < n; ++i) d[i * s] -= factor * z[i * s];
}

}  // namespace adi3d
