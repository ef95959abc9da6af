// Poisson in float and in mixed precision (issue 39 item 3), on the CPU backend:
// solver.precision = mixed (float sweeps, double residual) reaches solver.tol = 1e-10 and
// the double solve's solution; a plain float solve that stagnates above its tolerance
// still returns its iterate and says so, and its default tolerance is one it reaches.
#include "poisson_precision_checks.hpp"

namespace adi3d::test {
namespace {

class MixedPoisson : public ::testing::TestWithParam<PrecisionCase> {};

TEST_P(MixedPoisson, ReachesTenDigitsAndTheDoubleSolution) {
  expect_mixed_reaches_ten_digits(GetParam(), BackendKind::cpu, 2, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Decks, MixedPoisson, ::testing::ValuesIn(mixed_precision_cases()));

TEST(FloatPoisson, StagnatedSolveKeepsItsIterate) { expect_float_stagnation_keeps_its_iterate(BackendKind::cpu); }

TEST(FloatPoisson, DefaultToleranceIsReached) {
  expect_float_default_tolerance_reached(BackendKind::cpu);
  // Double and mixed keep double's default.
  const PoissonRun d = run_adi_example("poisson_neumann.ini", {"grid.n=17", "solver.precision=double"});
  EXPECT_EQ(d.result.tolerance, 1e-8);
  const PoissonRun m = run_adi_example("poisson_neumann.ini", {"grid.n=17", "solver.precision=mixed"});
  EXPECT_EQ(m.result.tolerance, 1e-8);
  EXPECT_TRUE(m.result.report.converged);
}

}  // namespace
}  // namespace adi3d::test
