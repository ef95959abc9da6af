// Second order in space and time for the example heat decks: errors fall by >= 3.5 when
// h and dt halve together.
#include "deck_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace adi3d {
namespace {

struct Level {
  int n;
  double dt;
};

std::vector<physics::ErrorNorms> refine(const std::string& deck, const std::vector<Level>& levels,
                                        const std::vector<std::string>& extra = {}) {
  std::vector<physics::ErrorNorms> errors;
  for (const Level& l : levels) {
    std::vector<std::string> sets = extra;
    sets.push_back("grid.n=" + std::to_string(l.n));
    sets.push_back("time.dt=" + std::to_string(l.dt));
    errors.push_back(test::run_example(deck, sets));
  }
  return errors;
}

TEST(HeatConvergence, DecayingModeIsSecondOrder) {
  const auto e = refine("heat_sine.ini", {{17, 0.004}, {33, 0.002}}, {"time.t_end=0.04"});
  const double ratio_l2 = e[0].l2 / e[1].l2, ratio_max = e[0].max / e[1].max;
  RecordProperty("ratio_l2", std::to_string(ratio_l2));
  EXPECT_GE(ratio_l2, 3.5) << e[0].l2 << " -> " << e[1].l2;
  EXPECT_GE(ratio_max, 3.5) << e[0].max << " -> " << e[1].max;
  // The semi-discrete mode decays at 3 (4/h^2) sin^2(pi h/2) instead of 3 pi^2: a relative
  // rate error of pi^2 h^2 / 12, so at t = 0.04, h = 1/32 the max error is close to
  // exp(-3 pi^2 t) * 3 pi^2 t * pi^2 h^2 / 12 = 2.9e-4.
  EXPECT_LT(e[1].max, 3.2e-4);
}

TEST(HeatConvergence, FloatPrecisionReachesTheSameError) {
  std::vector<std::string> sets = {"grid.n=17", "time.dt=0.004", "time.t_end=0.04",
                                   "solver.precision=float", "solver.backend=cpu"};
  const physics::ErrorNorms ef = test::run_example<float>("heat_sine.ini", sets);
  sets.pop_back();
  sets.pop_back();
  const physics::ErrorNorms ed = test::run_example<double>("heat_sine.ini", sets);
  // The discretisation error dominates float rounding at this resolution.
  EXPECT_NEAR(ef.max, ed.max, 1e-3 * ed.max + 1e-6);
}

}  // namespace
}  // namespace adi3d
