#pragma once
// The reduced systems of the partition method (distributed_backend.hpp): per z line, two
// unknowns per rank, its first and last owned row, F_p and L_p, coupled through the
// responses to the ghost rows:
//   F_p - vF_p L_below(p) - wF_p F_above(p) = yF_p
//   L_p - vL_p L_below(p) - wL_p F_above(p) = yL_p
// Diagonally dominant by rows (|v| + |w| < 1 for the diagonally dominant line systems of
// ADI), so elimination without pivoting is stable. Solved in double and densely (2 unknowns
// per rank: small for the rank counts of slabs; a banded solve takes over past a few dozen
// ranks, docs/scaling.md).
#include "solvers/distributed/slab_decomposition.hpp"

#include <cstddef>
#include <vector>

namespace adi3d {

// One rank's message: y at its first and last owned row for every line of a plane, then
// vF, vL, wF, wL: one value each where every line has the same matrix, else a plane each.
struct ReducedLayout {
  std::size_t plane;
  bool per_line;
  std::size_t coefficients() const { return per_line ? plane : 1; }
  std::size_t y_first() const { return 0; }
  std::size_t y_last() const { return plane; }
  std::size_t v_first() const { return 2 * plane; }
  std::size_t v_last() const { return 2 * plane + coefficients(); }
  std::size_t w_first() const { return 2 * plane + 2 * coefficients(); }
  std::size_t w_last() const { return 2 * plane + 3 * coefficients(); }
  std::size_t message_size() const { return 2 * plane + 4 * coefficients(); }
};

// Who neighbours whom along the split axis, and which rank solves.
struct ReducedRanks {
  int me = 0;
  std::vector<int> below, above;  // per rank; -1 where a face of the whole grid is
  static ReducedRanks of(const SlabDecomposition& slab);
};

// From every rank's message (in rank order, layout.message_size() values each), the value
// of each line at the last row of this rank's lower neighbour (x_below) and at the first row
// of its upper neighbour (x_above); zeros where there is no such neighbour.
template <class T>
void solve_reduced_systems(const ReducedLayout& layout, const T* messages, const ReducedRanks& ranks, T* x_below,
                           T* x_above);

}  // namespace adi3d
