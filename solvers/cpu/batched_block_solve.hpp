#pragma once
// Solves a block of B tridiagonal systems of n rows stored row-major by system index:
// entry m of system q at [m*B + q]. The inner loops run over q with unit stride, so they
// vectorise; every axis of the CPU backend gathers its lines into such blocks.
#include <cstddef>

namespace adi3d::cpu {

template <class T>
struct BlockScratch {
  T* a;
  T* b;
  T* c;
  T* d;   // right-hand sides in, solutions out
  T* cp;  // modified upper diagonal
  T* z;   // Sherman-Morrison correction (cyclic systems)
  T* bb;  // modified diagonal (cyclic systems)
};

template <class T>
void thomas_block(int n, int B, const T* a, const T* b, const T* c, T* d, T* cp) {
  for (int q = 0; q < B; ++q) {
    const T inv = T(1) / b[q];
    cp[q] = c[q] * inv;
    d[q] *= inv;
  }
  for (int m = 1; m < n; ++m) {
    const std::size_t r = static_cast<std::size_t>(m) * B, s = r - B;
#pragma omp simd
    for (int q = 0; q < B; ++q) {
      const T inv = T(1) / (b[r + q] - a[r + q] * cp[s + q]);
      cp[r + q] = c[r + q] * inv;
      d[r + q] = (d[r + q] - a[r + q] * d[s + q]) * inv;
    }
  }
  for (int m = n - 2; m >= 0; --m) {
    const std::size_t r = static_cast<std::size_t>(m) * B, s = r + B;
#pragma omp simd
    for (int q = 0; q < B; ++q) d[r + q] -= cp[r + q] * d[s + q];
  }
}

// Cyclic systems (a at row 0 and c at row n-1 are the corner entries), n >= 3, by
// Sherman-Morrison with gamma = -b[0].
template <class T>
void cyclic_thomas_block(int n, int B, const BlockScratch<T>& s) {
  const std::size_t last = static_cast<std::size_t>(n - 1) * B;
  for (std::size_t e = 0; e < static_cast<std::size_t>(n) * B; ++e) {
    s.bb[e] = s.b[e];
    s.z[e] = T(0);
  }
  for (int q = 0; q < B; ++q) {
    const T gamma = -s.b[q];
    s.bb[q] = s.b[q] - gamma;
    s.bb[last + q] = s.b[last + q] - s.a[q] * s.c[last + q] / gamma;
    s.z[q] = gamma;
    s.z[last + q] = s.c[last + q];
  }
  thomas_block(n, B, s.a, s.bb, s.c, s.d, s.cp);
  thomas_block(n, B, s.a, s.bb, s.c, s.z, s.cp);
  for (int q = 0; q < B; ++q) {
    const T gamma = -s.b[q];
    const T alpha = s.a[q];
    const T f = (s.d[q] + alpha * s.d[last + q] / gamma) /
                (T(1) + s.z[q] + alpha * s.z[last + q] / gamma);
    for (int m = 0; m < n; ++m) s.d[static_cast<std::size_t>(m) * B + q] -= f * s.z[static_cast<std::size_t>(m) * B + q];
  }
}

}  // namespace adi3d::cpu
