#pragma once
// Random diagonally dominant batches on the host and the dense oracle applied to one
// system of a batch, shared by the CPU and GPU tridiagonal tests.
#include "dense_reference.hpp"
#include "solvers/tridiag/tridiag.hpp"

#include <random>
#include <vector>

namespace adi3d::test {

template <class T>
struct HostBatch {
  std::vector<T> a, b, c, d;
  long n, count;
  tridiag::Layout layout;
  bool cyclic;
  HostBatch(long n_, long count_, tridiag::Layout l, bool cyc, unsigned seed)
      : n(n_), count(count_), layout(l), cyclic(cyc) {
    const std::size_t total = static_cast<std::size_t>(n * count);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    a.resize(total);
    b.resize(total);
    c.resize(total);
    d.resize(total);
    for (std::size_t i = 0; i < total; ++i) {
      a[i] = static_cast<T>(u(rng));
      c[i] = static_cast<T>(u(rng));
      b[i] = static_cast<T>(2.5 + 0.5 * u(rng));
      d[i] = static_cast<T>(u(rng) + (u(rng) > 0 ? 0.1 : -0.1));
    }
  }
  std::size_t at(long s, long i) const {
    return static_cast<std::size_t>(layout == tridiag::Layout::contiguous ? s * n + i : i * count + s);
  }
  tridiag::TridiagBatch<T> view() {
    return tridiag::TridiagBatch<T>{a.data(), b.data(), c.data(), d.data(), n, count, layout, cyclic};
  }
  // The dense oracle for system s (double precision).
  std::vector<double> reference(long s) const {
    std::vector<std::vector<double>> m(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
    std::vector<double> rhs(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) {
      const std::size_t q = at(s, i);
      const auto ii = static_cast<std::size_t>(i);
      m[ii][ii] += b[q];
      if (i > 0) m[ii][ii - 1] += a[q];
      else if (cyclic) m[ii][static_cast<std::size_t>(n - 1)] += a[q];
      if (i + 1 < n) m[ii][ii + 1] += c[q];
      else if (cyclic) m[ii][0] += c[q];
      rhs[ii] = d[q];
    }
    return dense_solve(m, rhs);
  }
};

}  // namespace adi3d::test
