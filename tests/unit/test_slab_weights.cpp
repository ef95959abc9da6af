// The interface weights of a slab of a split z axis (solvers/cuda/fused_step/slab_weights.hpp),
// checked without a GPU against a dense solve of the z line the fused z pass solves
// (line_row's rows over the unknowns): on random data, the solution's first and last owned
// rows are the weighted sums of the data, and a unit ghost value moves them by the
// coupling coefficients, for a slab between two neighbours, one on a Neumann face of the
// grid and one on a Dirichlet face (whose last row is no unknown: weights 0). And the
// reduced systems' ghost values as fixed combinations of every rank's y
// (reduced_combination) against their solve line by line.
#include "solvers/cuda/fused_step/slab_weights.hpp"
#include "solvers/distributed/reduced_system.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace adi3d {
namespace {

struct Slab {
  BoundaryKind lo, hi;
  bool ghost_lo, ghost_hi;
};

OperatorView<double> z_line(int nz, BoundaryKind lo, BoundaryKind hi) {
  OperatorView<double> op{};
  for (int a = 0; a < 3; ++a) {
    op.n[a] = a == 2 ? nz : 4;
    op.inv_h[a] = nz - 1;
    op.inv_h2[a] = op.inv_h[a] * op.inv_h[a];
    op.alpha[a] = 0.7;
    op.lo[a] = op.hi[a] = BoundaryKind::dirichlet;
  }
  op.lo[2] = lo;
  op.hi[2] = hi;
  return op;
}

// x = M^-1 d over the unknowns (dense elimination; 0 off them).
std::vector<double> dense_solve(const OperatorView<double>& op, double tau, std::vector<double> d) {
  const int first = cuda::fused::first_unknown(op, 2), last = cuda::fused::last_unknown(op, 2);
  const int m = last - first + 1;
  std::vector<double> a(static_cast<std::size_t>(m) * m, 0.0), b(m);
  for (int r = 0; r < m; ++r) {
    const TriRow<double> row = cuda::fused::line_row(op, 2, tau, first + r);
    if (r > 0) a[r * m + r - 1] = row.a;
    a[r * m + r] = row.b;
    if (r + 1 < m) a[r * m + r + 1] = row.c;
    b[r] = d[first + r];
  }
  for (int c = 0; c < m; ++c)
    for (int r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / a[c * m + c];
      for (int k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
      b[r] -= f * b[c];
    }
  std::vector<double> x(d.size(), 0.0);
  for (int r = m - 1; r >= 0; --r) {
    double s = b[r];
    for (int k = r + 1; k < m; ++k) s -= a[r * m + k] * x[first + k];
    x[first + r] = s / a[r * m + r];
  }
  return x;
}

TEST(SlabWeights, WeightedSumsAndCouplingsMatchADenseSolve) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const double tau = 0.013;
  for (const Slab& slab : {Slab{BoundaryKind::dirichlet, BoundaryKind::dirichlet, true, true},
                           Slab{BoundaryKind::neumann, BoundaryKind::dirichlet, false, true},
                           Slab{BoundaryKind::dirichlet, BoundaryKind::dirichlet, true, false}}) {
    for (int nz : {4, 5, 37}) {
      SCOPED_TRACE(testing::Message() << "nz " << nz << " ghosts " << slab.ghost_lo << slab.ghost_hi);
      const OperatorView<double> op = z_line(nz, slab.lo, slab.hi);
      const int row_first = slab.ghost_lo ? 1 : 0, row_last = nz - 1 - (slab.ghost_hi ? 1 : 0);
      const cuda::fused::SlabWeights<double> w =
          cuda::fused::slab_weights(op, tau, row_first, row_last, slab.ghost_lo, slab.ghost_hi);
      ASSERT_EQ(w.w.size(), 2u * nz);

      std::vector<double> d(nz);
      for (double& v : d) v = uniform(rng);
      const std::vector<double> x = dense_solve(op, tau, d);
      double sum_first = 0, sum_last = 0;
      for (int k = 0; k < nz; ++k) {
        sum_first += w.w[k] * d[k];
        sum_last += w.w[nz + k] * d[k];
      }
      EXPECT_NEAR(sum_first, x[row_first], 1e-13);
      EXPECT_NEAR(sum_last, x[row_last], 1e-13);
      if (!slab.ghost_hi && slab.hi == BoundaryKind::dirichlet) {
        EXPECT_EQ(sum_last, 0.0);  // the grid's Dirichlet face: no unknown
      }

      // A unit value in a ghost row enters the row beside it as s (line_row's coupling):
      // rows F and L respond by the coefficients (lower ghost: v, upper: w); 0 without it.
      auto expect_response = [&](bool ghost, int row, double coupling, double s, double at_first,
                                 double at_last) {
        if (!ghost) {
          EXPECT_EQ(at_first, 0.0);
          EXPECT_EQ(at_last, 0.0);
          return;
        }
        std::vector<double> unit(nz, 0.0);
        unit[row] = -coupling;
        EXPECT_DOUBLE_EQ(s, unit[row]);
        const std::vector<double> x_unit = dense_solve(op, tau, unit);
        EXPECT_NEAR(at_first, x_unit[row_first], 1e-14);
        EXPECT_NEAR(at_last, x_unit[row_last], 1e-14);
      };
      const int first = cuda::fused::first_unknown(op, 2), last = cuda::fused::last_unknown(op, 2);
      expect_response(slab.ghost_lo, first, cuda::fused::line_row(op, 2, tau, first).a, w.s_lo, w.v_first,
                      w.v_last);
      expect_response(slab.ghost_hi, last, cuda::fused::line_row(op, 2, tau, last).c, w.s_hi, w.w_first,
                      w.w_last);
    }
  }
}

TEST(ReducedCombination, GhostValuesAreTheCombinationsOfEveryRanksY) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> coefficient(0.0, 0.45), value(-1, 1);
  for (bool periodic : {false, true})
    for (int ranks = 1; ranks <= 5; ++ranks)
      for (int me = 0; me < ranks; ++me) {
        SCOPED_TRACE(testing::Message() << ranks << " ranks, rank " << me << (periodic ? ", periodic" : ""));
        ReducedLines r;
        r.plane = 3;  // lines
        r.ranks = ranks;
        r.me = me;
        r.periodic = periodic;
        const std::size_t size = r.message_size();
        std::vector<double> coefficients(4 * ranks), messages(size * ranks);
        for (int p = 0; p < ranks; ++p)
          for (int c = 0; c < 4; ++c) {
            // A ghost a rank lacks couples nothing (rank 0 below, the last rank above).
            const bool none = !periodic && ((c < 2 && p == 0) || (c >= 2 && p == ranks - 1));
            coefficients[4 * p + c] = none ? 0.0 : coefficient(rng);
            messages[p * size + r.v_first() + c] = coefficients[4 * p + c];
          }
        for (int p = 0; p < ranks; ++p)
          for (std::size_t q = 0; q < 2 * r.plane; ++q) messages[p * size + q] = value(rng);
        const ReducedCombination combination = reduced_combination(r, coefficients);
        std::vector<double> work(kReducedScratchPerRank * ranks);
        for (std::size_t q = 0; q < r.plane; ++q) {
          double below = 0, above = 0, combined_below = 0, combined_above = 0;
          solve_reduced_line(r, messages.data(), q, work.data(), below, above);
          for (int j = 0; j < 2 * ranks; ++j) {
            const double y = messages[(j / 2) * size + (j % 2 == 0 ? r.y_first() : r.y_last()) + q];
            combined_below += combination.below[j] * y;
            combined_above += combination.above[j] * y;
          }
          EXPECT_NEAR(combined_below, below, 1e-14);
          EXPECT_NEAR(combined_above, above, 1e-14);
          if (!periodic && me == 0) {
            EXPECT_EQ(combined_below, 0.0);
          }
        }
      }
}

}  // namespace
}  // namespace adi3d
