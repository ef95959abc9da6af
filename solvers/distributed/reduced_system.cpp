#include "solvers/distributed/reduced_system.hpp"

#include <vector>

namespace adi3d {

template <class T>
void solve_reduced_systems(const ReducedLines& r, const T* messages, T* x_below, T* x_above) {
  const long lines = static_cast<long>(r.plane);
#pragma omp parallel
  {
    std::vector<double> work(static_cast<std::size_t>(kReducedScratchPerRank) * r.ranks);
#pragma omp for schedule(static)
    for (long q = 0; q < lines; ++q) {
      double below = 0, above = 0;
      solve_reduced_line(r, messages, static_cast<std::size_t>(q), work.data(), below, above);
      x_below[q] = static_cast<T>(below);
      x_above[q] = static_cast<T>(above);
    }
  }
}

ReducedCombination reduced_combination(ReducedLines r, const std::vector<double>& coefficients) {
  r.plane = 1;
  r.per_line = false;
  const std::size_t size = r.message_size();
  const int unknowns = 2 * r.ranks;
  std::vector<double> messages(size * r.ranks, 0.0), work(static_cast<std::size_t>(kReducedScratchPerRank) * r.ranks);
  for (int p = 0; p < r.ranks; ++p)
    for (int c = 0; c < 4; ++c) messages[p * size + r.v_first() + c] = coefficients[4 * p + c];
  ReducedCombination out{std::vector<double>(unknowns), std::vector<double>(unknowns)};
  for (int j = 0; j < unknowns; ++j) {
    double& y = messages[(j / 2) * size + (j % 2 == 0 ? r.y_first() : r.y_last())];
    y = 1.0;
    solve_reduced_line(r, messages.data(), 0, work.data(), out.below[j], out.above[j]);
    y = 0.0;
  }
  return out;
}

template void solve_reduced_systems(const ReducedLines&, const float*, float*, float*);
template void solve_reduced_systems(const ReducedLines&, const double*, double*, double*);

}  // namespace adi3d
