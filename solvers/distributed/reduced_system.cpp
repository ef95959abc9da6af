#include "solvers/distributed/reduced_system.hpp"

#include <algorithm>
#include <vector>

namespace adi3d {

ReducedRanks ReducedRanks::of(const SlabDecomposition& slab) {
  ReducedRanks r;
  r.me = slab.rank;
  const int n = slab.ranks;
  const bool periodic = slab.whole_bc.periodic(2);
  r.below.resize(n);
  r.above.resize(n);
  for (int p = 0; p < n; ++p) {
    r.below[p] = p > 0 ? p - 1 : periodic && n > 1 ? n - 1 : -1;
    r.above[p] = p + 1 < n ? p + 1 : periodic && n > 1 ? 0 : -1;
  }
  return r;
}

namespace {

// The dense matrix of one line's reduced system, unknowns F_p at 2p and L_p at 2p + 1.
// coefficient(p, which) reads vF, vL, wF, wL (which = 0..3) of rank p for the line.
template <class Coefficient>
void assemble(const ReducedRanks& ranks, Coefficient coefficient, std::vector<double>& m) {
  const int n = 2 * static_cast<int>(ranks.below.size());
  std::fill(m.begin(), m.end(), 0.0);
  for (int p = 0; p * 2 < n; ++p) {
    for (int row = 0; row < 2; ++row) {
      const int i = 2 * p + row;
      m[i * n + i] = 1.0;
      if (ranks.below[p] >= 0) m[i * n + 2 * ranks.below[p] + 1] -= coefficient(p, row);      // v
      if (ranks.above[p] >= 0) m[i * n + 2 * ranks.above[p]] -= coefficient(p, 2 + row);      // w
    }
  }
}

// In-place LU without pivoting (diagonally dominant by rows), L unit lower.
void factor(std::vector<double>& m, int n) {
  for (int k = 0; k < n; ++k) {
    const double inv = 1.0 / m[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double l = m[i * n + k] * inv;
      if (l == 0.0) continue;
      m[i * n + k] = l;
      for (int j = k + 1; j < n; ++j) m[i * n + j] -= l * m[k * n + j];
    }
  }
}

void substitute(const std::vector<double>& lu, int n, double* x) {
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < i; ++j) x[i] -= lu[i * n + j] * x[j];
  for (int i = n - 1; i >= 0; --i) {
    for (int j = i + 1; j < n; ++j) x[i] -= lu[i * n + j] * x[j];
    x[i] /= lu[i * n + i];
  }
}

}  // namespace

template <class T>
void solve_reduced_systems(const ReducedLayout& layout, const T* messages, const ReducedRanks& ranks, T* x_below,
                           T* x_above) {
  const int count = static_cast<int>(ranks.below.size());
  const int n = 2 * count;
  const std::size_t size = layout.message_size();
  const std::size_t coefficient_at[4] = {layout.v_first(), layout.v_last(), layout.w_first(), layout.w_last()};
  const int below = ranks.below[ranks.me], above = ranks.above[ranks.me];
  const long lines = static_cast<long>(layout.plane);

  std::vector<double> shared_lu;
  if (!layout.per_line) {
    shared_lu.assign(static_cast<std::size_t>(n) * n, 0.0);
    assemble(ranks, [&](int p, int which) { return static_cast<double>(messages[p * size + coefficient_at[which]]); },
             shared_lu);
    factor(shared_lu, n);
  }
#pragma omp parallel
  {
    std::vector<double> lu(layout.per_line ? static_cast<std::size_t>(n) * n : 0), x(n);
#pragma omp for schedule(static)
    for (long q = 0; q < lines; ++q) {
      for (int p = 0; p < count; ++p) {
        x[2 * p] = static_cast<double>(messages[p * size + layout.y_first() + q]);
        x[2 * p + 1] = static_cast<double>(messages[p * size + layout.y_last() + q]);
      }
      if (layout.per_line) {
        assemble(ranks, [&](int p, int which) { return static_cast<double>(messages[p * size + coefficient_at[which] + q]); },
                 lu);
        factor(lu, n);
        substitute(lu, n, x.data());
      } else {
        substitute(shared_lu, n, x.data());
      }
      x_below[q] = below >= 0 ? static_cast<T>(x[2 * below + 1]) : T(0);
      x_above[q] = above >= 0 ? static_cast<T>(x[2 * above]) : T(0);
    }
  }
}

template void solve_reduced_systems(const ReducedLayout&, const float*, const ReducedRanks&, float*, float*);
template void solve_reduced_systems(const ReducedLayout&, const double*, const ReducedRanks&, double*, double*);

}  // namespace adi3d
