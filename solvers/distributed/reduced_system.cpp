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

template void solve_reduced_systems(const ReducedLines&, const float*, float*, float*);
template void solve_reduced_systems(const ReducedLines&, const double*, double*, double*);

}  // namespace adi3d
