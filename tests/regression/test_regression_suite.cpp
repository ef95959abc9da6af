// The analytic regression suite: every example deck with check.exact, run at two or three
// resolutions. Heat cases refine h and dt together (both second order: errors fall 4x);
// time-only and space-only refinements isolate each order. Each case also bounds the
// finest error (values measured when the case was added, with 25% headroom).
#include "deck_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace adi3d {
namespace {

struct Level {
  std::string n;  // grid.n override
  double dt;      // time.dt override (ignored by Poisson decks)
};

struct Case {
  const char* deck;
  std::vector<Level> levels;
  std::vector<std::string> extra;  // further overrides
  double finest_l2_bound;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.deck; }

class RegressionSuite : public ::testing::TestWithParam<Case> {};

TEST_P(RegressionSuite, SecondOrderAndBoundedError) {
  const Case& c = GetParam();
  std::vector<physics::ErrorNorms> errors;
  for (const Level& level : c.levels) {
    std::vector<std::string> sets = c.extra;
    sets.push_back("grid.n=" + level.n);
    if (level.dt > 0) sets.push_back("time.dt=" + std::to_string(level.dt));
    errors.push_back(test::run_example(c.deck, sets));
  }
  for (std::size_t l = 1; l < errors.size(); ++l) {
    const double order_l2 = std::log2(errors[l - 1].l2 / errors[l].l2);
    const double order_max = std::log2(errors[l - 1].max / errors[l].max);
    EXPECT_GE(order_l2, 1.8) << c.deck << " level " << l << ": L2 " << errors[l - 1].l2 << " -> " << errors[l].l2;
    EXPECT_GE(order_max, 1.8) << c.deck << " level " << l << ": max " << errors[l - 1].max << " -> "
                              << errors[l].max;
  }
  EXPECT_LT(errors.back().l2, c.finest_l2_bound) << c.deck;
  std::printf("%s: L2", c.deck);
  for (const auto& e : errors) std::printf(" %.3e", e.l2);
  std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RegressionSuite,
    ::testing::Values(
        Case{"heat_sine.ini", {{"17", 0.004}, {"33", 0.002}}, {"time.t_end=0.04"}, 1.25 * 9.84e-5},
        Case{"heat_anisotropic.ini", {{"17", 0.002}, {"33", 0.001}}, {"time.t_end=0.02"}, 1.25 * 5.54e-4},
        Case{"heat_manufactured.ini", {{"9 13 5", 0.02}, {"17 25 9", 0.01}, {"33 49 17", 0.005}},
             {"time.t_end=0.2"}, 1.25 * 1.48e-5},
        Case{"heat_neumann.ini", {{"17", 0.02}, {"33", 0.01}}, {"time.t_end=0.2"}, 1.25 * 2.54e-4},
        Case{"heat_insulated.ini", {{"17", 0.004}, {"33", 0.002}}, {"time.t_end=0.04"}, 1.25 * 9.56e-5},
        Case{"heat_flux_decay.ini", {{"17", 0.004}, {"33", 0.002}}, {}, 1.25 * 2.05e-4},
        Case{"heat_periodic.ini", {{"16 16 17", 0.002}, {"32 32 33", 0.001}}, {"time.t_end=0.02"}, 1.25 * 7.40e-4},
        Case{"heat_mixed.ini", {{"17 16 17", 0.02}, {"33 32 33", 0.01}}, {"time.t_end=0.1"}, 1.25 * 2.41e-3},
        Case{"heat_variable_alpha.ini", {{"17", 0.02}, {"33", 0.01}}, {"time.t_end=0.1"}, 1.25 * 3.74e-4},
        Case{"heat_variable_insulated.ini", {{"17", 0.02}, {"33", 0.01}}, {"time.t_end=0.1"}, 1.25 * 3.64e-4},
        // Time order alone: the solution is quadratic in space, so only dt matters.
        Case{"heat_time_order.ini", {{"9 11 13", 0.1}, {"9 11 13", 0.05}, {"9 11 13", 0.025}}, {}, 1.25 * 2.50e-5},
        // Space order alone, for each Poisson case.
        Case{"poisson_dirichlet.ini", {{"17", 0}, {"33", 0}}, {}, 1.25 * 1.72e-4},
        Case{"poisson_neumann.ini", {{"17", 0}, {"33", 0}}, {}, 1.25 * 4.16e-4},
        Case{"poisson_periodic.ini", {{"16", 0}, {"32", 0}}, {}, 1.25 * 2.55e-3}));

// (h) The slab's solution is piecewise linear and the interface lies midway between
// nodes, so the discrete solution, and with it the steady flux, is exact up to the
// solver tolerance.
TEST(RegressionSlab, TwoLayerSteadyStateHasTheExactFlux) {
  for (const char* n : {"6 6 16", "8 8 32"}) {
    const physics::ErrorNorms e = test::run_example("slab_two_layer.ini", {std::string("grid.n=") + n});
    EXPECT_LT(e.max, 1e-7) << n;
  }
}

// The same slab as a heat run to steady state (backward Euler): the Douglas step's fixed
// point is the discrete steady state, exact on the grid, whatever dt.
TEST(RegressionSlab, TwoLayerHeatRunEndsOnTheExactSteadyState) {
  for (const char* n : {"8 8 32", "16 16 64"}) {
    const physics::ErrorNorms e = test::run_example("heat_two_layer.ini", {std::string("grid.n=") + n});
    EXPECT_LT(e.max, 1e-12) << n;
  }
}

}  // namespace
}  // namespace adi3d
