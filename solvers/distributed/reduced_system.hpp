#pragma once
// The reduced systems of the partition method (distributed_backend.hpp): per z line, two
// unknowns per rank, its first and last owned row, F_p and L_p, coupled through the
// responses to its ghost rows, whose values are the lower neighbour's L and the upper
// neighbour's F:
//   F_p - vF_p L_(p-1) - wF_p F_(p+1) = yF_p
//   L_p - vL_p L_(p-1) - wL_p F_(p+1) = yL_p
// In the order F_0, L_0, F_1, L_1, ... the matrix is banded (two diagonals each side) and
// diagonally dominant by rows (|v| + |w| < 1 for the diagonally dominant line systems of
// ADI), so banded elimination without pivoting is stable: O(ranks) per line. A periodic
// axis couples rank 0 and the last rank (L_(-1) = L_(R-1), F_R = F_0): three solves of the
// open chain with those two values as data, then a 2 x 2 system for them. Solved in
// double by the CPU loop and the CUDA kernel alike (one definition, below).
#include "solvers/host_device.hpp"

#include <cstddef>
#include <vector>

namespace adi3d {

// How every rank's message lays out y, v and w, and what a rank needs of the solution.
struct ReducedLines {
  std::size_t plane = 0;    // lines (values per plane)
  bool per_line = false;    // v and w per line (alpha fields), else one value each
  int ranks = 1;
  int me = 0;               // the solving rank: it keeps L_(me-1) and F_(me+1)
  bool periodic = false;

  // One rank's message: y at its first and last owned row for every line, then vF, vL, wF,
  // wL: one value each where every line has the same matrix, else a plane each.
  ADI3D_HD std::size_t coefficients() const { return per_line ? plane : 1; }
  ADI3D_HD std::size_t y_first() const { return 0; }
  ADI3D_HD std::size_t y_last() const { return plane; }
  ADI3D_HD std::size_t v_first() const { return 2 * plane; }
  ADI3D_HD std::size_t v_last() const { return 2 * plane + coefficients(); }
  ADI3D_HD std::size_t w_first() const { return 2 * plane + 2 * coefficients(); }
  ADI3D_HD std::size_t w_last() const { return 2 * plane + 3 * coefficients(); }
  ADI3D_HD std::size_t message_size() const { return 2 * plane + 4 * coefficients(); }
};

// Rows of scratch one line's solve needs: 5 values per unknown and 3 right-hand sides.
constexpr int kReducedScratchPerRank = 2 * 8;

// Line q's reduced system from every rank's message (`messages`, rank-major), solved; the
// value of the lower neighbour's last row and the upper neighbour's first row for rank
// `me` (0 where there is none). `work` holds kReducedScratchPerRank * ranks doubles.
template <class T>
ADI3D_HD void solve_reduced_line(const ReducedLines& r, const T* messages, std::size_t q, double* work,
                                 double& x_below, double& x_above) {
  const int n = 2 * r.ranks;
  double* d = work;            // the band of U: diagonal, first and second upper
  double* u1 = d + n;
  double* u2 = u1 + n;
  double* m1 = u2 + n;         // multipliers of the rows one and two above
  double* m2 = m1 + n;
  double* x = m2 + n;          // right-hand sides, then solutions: base, unit g, unit h
  double* xg = x + n;
  double* xh = xg + n;
  const std::size_t size = r.message_size(), c = r.per_line ? q : 0;
  auto at = [&](int p, std::size_t offset) { return static_cast<double>(messages[p * size + offset]); };
  // The open chain's rows, and the right-hand sides (the periodic corners as data g, h).
  for (int p = 0; p < r.ranks; ++p) {
    const int f = 2 * p, l = 2 * p + 1;
    const bool below = p > 0, above = p + 1 < r.ranks;
    d[f] = d[l] = 1.0;
    m1[f] = below ? -at(p, r.v_first() + c) : 0.0;  // F_p: L_(p-1) one column left
    m2[f] = 0.0;
    u1[f] = 0.0;
    u2[f] = above ? -at(p, r.w_first() + c) : 0.0;  // F_(p+1) two columns right
    m1[l] = 0.0;
    m2[l] = below ? -at(p, r.v_last() + c) : 0.0;   // L_p: L_(p-1) two columns left
    u1[l] = above ? -at(p, r.w_last() + c) : 0.0;   // F_(p+1) one column right
    u2[l] = 0.0;
    x[f] = at(p, r.y_first() + q);
    x[l] = at(p, r.y_last() + q);
    xg[f] = xg[l] = xh[f] = xh[l] = 0.0;
  }
  if (r.periodic) {
    xg[0] = at(0, r.v_first() + c);  // rank 0's ghost below holds g = L_(R-1)
    xg[1] = at(0, r.v_last() + c);
    xh[n - 2] = at(r.ranks - 1, r.w_first() + c);  // the last rank's ghost above holds h = F_0
    xh[n - 1] = at(r.ranks - 1, r.w_last() + c);
  }
  // Banded elimination: row k eliminates its entries from rows k+1 and k+2 (m1, m2 become
  // the multipliers); the rhs follow.
  const int sides = r.periodic ? 3 : 1;
  for (int k = 0; k < n; ++k) {
    const double inv = 1.0 / d[k];
    if (k + 1 < n) {
      m1[k + 1] *= inv;
      d[k + 1] -= m1[k + 1] * u1[k];
      u1[k + 1] -= m1[k + 1] * u2[k];
    }
    if (k + 2 < n) {
      m2[k + 2] *= inv;
      m1[k + 2] -= m2[k + 2] * u1[k];  // row k+2's entry in column k+1, for row k+1 next
      d[k + 2] -= m2[k + 2] * u2[k];
    }
  }
  for (int s = 0; s < sides; ++s) {
    double* b = s == 0 ? x : s == 1 ? xg : xh;
    for (int i = 1; i < n; ++i) b[i] -= m1[i] * b[i - 1] + (i >= 2 ? m2[i] * b[i - 2] : 0.0);
    b[n - 1] /= d[n - 1];
    for (int i = n - 2; i >= 0; --i)
      b[i] = (b[i] - u1[i] * b[i + 1] - (i + 2 < n ? u2[i] * b[i + 2] : 0.0)) / d[i];
  }
  double g = 0, h = 0;
  if (r.periodic) {
    // g = L_(R-1) and h = F_0 of x + g xg + h xh.
    const double a11 = 1.0 - xg[n - 1], a12 = -xh[n - 1], a21 = -xg[0], a22 = 1.0 - xh[0];
    const double det = a11 * a22 - a12 * a21;
    g = (x[n - 1] * a22 - a12 * x[0]) / det;
    h = (a11 * x[0] - a21 * x[n - 1]) / det;
  }
  auto value = [&](int i) { return x[i] + g * xg[i] + h * xh[i]; };
  x_below = r.me > 0 ? value(2 * r.me - 1) : r.periodic ? g : 0.0;
  x_above = r.me + 1 < r.ranks ? value(2 * r.me + 2) : r.periodic ? h : 0.0;
}

// Where every line has the same reduced matrix (constant alpha), the ghost values of rank
// r.me are fixed linear functions of every rank's y: x_below = sum_j below[j] y_j and
// x_above = sum_j above[j] y_j, with y_2p = yF_p and y_2p+1 = yL_p. From every rank's four
// coefficients (vF, vL, wF, wL of rank p at 4p..4p+3), by solve_reduced_line on unit data:
// the fused slab step then forms the ghost values in the pass that adds them to the z
// pass's data, with no solve per line.
struct ReducedCombination {
  std::vector<double> below, above;  // 2 r.ranks each
};
ReducedCombination reduced_combination(ReducedLines r, const std::vector<double>& coefficients);

// Every line's reduced system on the host (OpenMP over lines): x_below and x_above take a
// plane each.
template <class T>
void solve_reduced_systems(const ReducedLines& r, const T* messages, T* x_below, T* x_above);

}  // namespace adi3d
