// The mixed-precision Poisson solve (solvers/poisson_mixed.hpp) driven directly on the CPU
// backend: the conversions between its halves, its stop() and progress callbacks, its
// limits and a source that is not finite. The decks' solves are in
// tests/regression/test_poisson_precision.cpp.
#include "solvers/poisson_mixed.hpp"
#include "tests/unit/grid_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace adi3d::test {
namespace {

// f = sin(3x + y) + z on the grid, zero on the faces.
class SmoothSource final : public Forcing<double> {
 public:
  explicit SmoothSource(const Grid3& g, double poison = 0) : g_(g), poison_(poison) {}
  bool has_source() const override { return true; }
  bool source_depends_on_time() const override { return false; }
  void source(double, double* v) const override {
    for (int k = 0; k < g_.n[2]; ++k)
      for (int j = 0; j < g_.n[1]; ++j)
        for (int i = 0; i < g_.n[0]; ++i)
          v[g_.index(i, j, k)] = std::sin(3 * g_.coord(0, i) + g_.coord(1, j)) + g_.coord(2, k);
    if (poison_ != 0) v[g_.index(g_.n[0] / 2, g_.n[1] / 2, g_.n[2] / 2)] = poison_;
  }
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int) const override { return true; }
  void boundary(int face, double, double* v) const override { std::fill(v, v + face_size(g_, face), 0.0); }

 private:
  Grid3 g_;
  double poison_;
};

class MixedSolve : public ::testing::Test {
 protected:
  MixedSolve() : d_(make_diffusion<double>({17, 13, 11}, boundary_mix(BoundaryKind::dirichlet, BoundaryKind::neumann,
                                                                        BoundaryKind::dirichlet),
                                           false, rng_)),
                 data_(d_.grid) {}

  PoissonReport solve(PoissonOptions options, const std::function<void(long, long, double)>& progress = {},
                      const std::function<bool()>& stop = {}) {
    u_ = outer_->allocate(d_.grid.size());
    outer_->fill(u_.data(), 0.0, d_.grid.size());
    PoissonMixed solver(*outer_, *inner_, d_, data_, options);
    return solver.solve(u_.data(), progress, stop);
  }

  std::mt19937 rng_{20261201};
  Diffusion<double> d_;
  SmoothSource data_;
  std::unique_ptr<Backend<double>> outer_ = make_cpu_backend<double>();
  std::unique_ptr<Backend<float>> inner_ = make_cpu_backend<float>();
  Array<double> u_;
};

// In double, rounded once into the target: a float x times a double a keeps a's digits, and
// a double result becomes the float nearest to it.
TEST(AxpbyConverted, WorksInDoubleAndRoundsOnce) {
  const auto d = make_cpu_backend<double>();
  const auto f = make_cpu_backend<float>();
  const std::vector<float> xf{1.0f + std::numeric_limits<float>::epsilon(), -3.5f, 0.1f};
  const std::vector<double> xd{1.0 / 3.0, 1e-40, 16777217.0};
  const std::vector<double> y0{1e-9, 2.0, -1.0};
  std::vector<double> y = y0;
  d->axpby_converted(1.0 / 3.0, xf.data(), 1.0, y.data(), y.size());
  for (std::size_t e = 0; e < y.size(); ++e) EXPECT_EQ(y[e], 1.0 / 3.0 * static_cast<double>(xf[e]) + y0[e]) << e;
  std::vector<float> z(3, std::numeric_limits<float>::quiet_NaN());  // b = 0: never read
  f->axpby_converted(3.0, xd.data(), 0.0, z.data(), z.size());
  EXPECT_EQ(z[0], 1.0f);                                  // 3 * (1/3) in double is 1
  EXPECT_EQ(z[1], static_cast<float>(3.0 * 1e-40));       // a float denormal, not 3 * float(1e-40)
  EXPECT_EQ(z[2], static_cast<float>(3.0 * 16777217.0));  // one rounding
}

// Rounding aside, the sweeps are the double iteration's: to tol 1e-10 in a few refinements,
// about as many sweeps as the double solve takes iterations.
TEST_F(MixedSolve, ReachesTheToleranceInAFewRefinements) {
  const PoissonReport m = solve({1e-10, 1000, 0});
  EXPECT_TRUE(m.converged);
  EXPECT_LE(m.relative_residual, 1e-10);
  EXPECT_GE(m.refinements, 2);
  EXPECT_LE(m.refinements, 4);
  Array<double> u = outer_->allocate(d_.grid.size());
  outer_->fill(u.data(), 0.0, d_.grid.size());
  const PoissonReport d = PoissonAdi<double>(*outer_, d_, data_, {1e-10, 1000, 0}).solve(u.data());
  EXPECT_LE(m.iterations, d.iterations + 2) << "double: " << d.iterations;
  const Norms diff = outer_->difference_norms(u_.data(), u.data(), d_.grid.size());
  EXPECT_LE(diff.max_abs, 1e-10 * outer_->difference_norms(u.data(), nullptr, d_.grid.size()).max_abs);
}

// progress sees every sweep once, in order, with the refinement it belongs to; the
// estimates are the history, and the refinements' first estimate is the double residual.
TEST_F(MixedSolve, ProgressCountsSweepsAndNamesRefinements) {
  std::vector<long> sweeps, refinements;
  std::vector<double> estimates;
  const PoissonReport r = solve({1e-9, 1000, 0}, [&](long k, long refinement, double relative) {
    sweeps.push_back(k);
    refinements.push_back(refinement);
    estimates.push_back(relative);
  });
  ASSERT_EQ(sweeps.size(), static_cast<std::size_t>(r.iterations));
  for (std::size_t s = 0; s < sweeps.size(); ++s) EXPECT_EQ(sweeps[s], static_cast<long>(s) + 1);
  EXPECT_EQ(refinements.front(), 1);
  EXPECT_EQ(refinements.back(), r.refinements);
  EXPECT_TRUE(std::is_sorted(refinements.begin(), refinements.end()));
  EXPECT_EQ(estimates, r.history);
  for (std::size_t s = 1; s < sweeps.size(); ++s) {
    if (refinements[s] == refinements[s - 1]) continue;
    EXPECT_EQ(estimates[s], r.refinement_history[static_cast<std::size_t>(refinements[s]) - 1]) << s;
  }
}

// stop() ends the float solve where it is; its correction counts, and the report says so.
TEST_F(MixedSolve, StopKeepsTheCorrectionSoFar) {
  int calls = 0;
  const PoissonReport r = solve({1e-10, 1000, 0}, {}, [&] { return ++calls == 5; });
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(r.refinements, 1);
  EXPECT_LT(r.relative_residual, 0.5);
  EXPECT_TRUE(std::isfinite(outer_->difference_norms(u_.data(), nullptr, d_.grid.size()).sum_squares));
}

// solver.max_iter counts sweeps over all refinements.
TEST_F(MixedSolve, MaxIterCountsSweeps) {
  const PoissonReport r = solve({1e-12, 7, 0});
  EXPECT_EQ(r.iterations, 7);
  EXPECT_FALSE(r.converged);
  EXPECT_FALSE(r.stagnated);
  EXPECT_GT(r.relative_residual, 1e-12);
}

TEST(MixedSolveData, NonFiniteSourceStopsBeforeAnySweep) {
  std::mt19937 rng(3);
  const Diffusion<double> d = make_diffusion<double>({9, 9, 9}, BoundarySpec{}, false, rng);
  const SmoothSource nan_source(d.grid, std::numeric_limits<double>::quiet_NaN());
  const auto outer = make_cpu_backend<double>();
  const auto inner = make_cpu_backend<float>();
  Array<double> u = outer->allocate(d.grid.size());
  outer->fill(u.data(), 0.0, d.grid.size());
  const PoissonReport r = PoissonMixed(*outer, *inner, d, nan_source, {1e-10, 100, 0}).solve(u.data());
  EXPECT_TRUE(r.non_finite);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 0);
}

}  // namespace
}  // namespace adi3d::test
