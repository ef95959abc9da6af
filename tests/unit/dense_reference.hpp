#pragma once
// The obvious oracle: Gaussian elimination with partial pivoting on a dense matrix, in
// double precision whatever the type under test.
#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace adi3d::test {

inline std::vector<double> dense_solve(std::vector<std::vector<double>> m, std::vector<double> rhs) {
  const std::size_t n = rhs.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    std::swap(m[col], m[pivot]);
    std::swap(rhs[col], rhs[pivot]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = m[r][col] / m[col][col];
      for (std::size_t c = col; c < n; ++c) m[r][c] -= f * m[col][c];
      rhs[r] -= f * rhs[col];
    }
  }
  std::vector<double> x(n);
  for (std::size_t r = n; r-- > 0;) {
    double s = rhs[r];
    for (std::size_t c = r + 1; c < n; ++c) s -= m[r][c] * x[c];
    x[r] = s / m[r][r];
  }
  return x;
}

// Tolerance for comparing a type's result with the double reference.
template <class T>
constexpr double tolerance() {
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

}  // namespace adi3d::test
