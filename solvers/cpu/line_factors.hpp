#pragma once
// The CPU backend's sweeps over the shared factors of constant-coefficient lines
// (solvers/line_factors.hpp), B lines at a time.
#include "solvers/line_factors.hpp"

#include <cstddef>

namespace adi3d::cpu {

// Solves B interleaved lines in place: row m of line q at d[m * row_stride + q].
// `correction` is scratch of B entries (used by cyclic axes).
template <class T>
void solve_factored(const LineFactors<T>& f, int B, T* d, std::size_t row_stride, T* correction) {
  const int n = f.n;
  for (int q = 0; q < B; ++q) d[q] *= f.inv[0];
  for (int m = 1; m < n; ++m) {
    T* cur = d + m * row_stride;
    const T* prev = cur - row_stride;
    const T am = f.a[m], im = f.inv[m];
#pragma omp simd
    for (int q = 0; q < B; ++q) cur[q] = (cur[q] - am * prev[q]) * im;
  }
  for (int m = n - 2; m >= 0; --m) {
    T* cur = d + m * row_stride;
    const T* next = cur + row_stride;
    const T cm = f.cp[m];
#pragma omp simd
    for (int q = 0; q < B; ++q) cur[q] -= cm * next[q];
  }
  if (!f.cyclic) return;
  const T* last = d + (n - 1) * row_stride;
  for (int q = 0; q < B; ++q) correction[q] = (d[q] + f.corner_ratio * last[q]) / f.denominator;
  for (int m = 0; m < n; ++m) {
    T* cur = d + m * row_stride;
    const T zm = f.z[m];
#pragma omp simd
    for (int q = 0; q < B; ++q) cur[q] -= correction[q] * zm;
  }
}

}  // namespace adi3d::cpu
