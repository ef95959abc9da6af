// Convective (Robin) faces against manufactured solutions (inputs/heat_robin.ini,
// inputs/poisson_robin.ini: h and u_inf varying in space and time, one face with a constant
// h), and their two limits: h = 0 is an insulated face, h -> infinity a Dirichlet face at
// u_inf.
#include "deck_runner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace adi3d {
namespace {

double order(double coarse, double fine) { return std::log2(coarse / fine); }

// h and dt halve together (dt = 0.02 h: the time error, larger next to Robin faces, stays
// below the space error, so both orders show from the coarsest level on).
TEST(RobinFaces, HeatIsSecondOrderInSpaceAndTime) {
  std::vector<physics::ErrorNorms> e;
  for (int n : {17, 33, 65})
    e.push_back(test::run_example("heat_robin.ini", {"grid.n=" + std::to_string(n), "time.t_end=0.04",
                                                     "time.dt=" + std::to_string(0.02 / (n - 1))}));
  for (std::size_t l = 1; l < e.size(); ++l) {
    EXPECT_GE(order(e[l - 1].l2, e[l].l2), 1.9) << e[l - 1].l2 << " -> " << e[l].l2;
    EXPECT_GE(order(e[l - 1].max, e[l].max), 1.9) << e[l - 1].max << " -> " << e[l].max;
  }
  EXPECT_LT(e.back().max, 1.25 * 2.70e-5);  // measured when added
}

// dt alone, on a grid fine enough that the time error dominates.
TEST(RobinFaces, HeatIsSecondOrderInTime) {
  std::vector<physics::ErrorNorms> e;
  for (double dt : {0.04, 0.02, 0.01})
    e.push_back(test::run_example("heat_robin.ini", {"grid.n=65", "time.t_end=0.16", "time.dt=" + std::to_string(dt)}));
  for (std::size_t l = 1; l < e.size(); ++l)
    EXPECT_GE(order(e[l - 1].l2, e[l].l2), 1.9) << e[l - 1].l2 << " -> " << e[l].l2;
}

TEST(RobinFaces, PoissonWithoutDirichletFacesIsSecondOrder) {
  std::vector<physics::ErrorNorms> e;
  for (int n : {17, 33, 65}) e.push_back(test::run_example("poisson_robin.ini", {"grid.n=" + std::to_string(n)}));
  for (std::size_t l = 1; l < e.size(); ++l) {
    EXPECT_GE(order(e[l - 1].l2, e[l].l2), 1.9) << e[l - 1].l2 << " -> " << e[l].l2;
    EXPECT_GE(order(e[l - 1].max, e[l].max), 1.9) << e[l - 1].max << " -> " << e[l].max;
  }
}

// The decks' u_inf is the exact solution plus (alpha / h) du/dn: with every Robin face
// at h = 0 the run is that of the same faces insulated, to rounding.
TEST(RobinFaces, ZeroCoefficientIsAnInsulatedFace) {
  const std::string u = "exp(-t) * (1 + x + x^2) * cos(y) * (2 + z)";
  const std::vector<std::string> common = {"grid.n=17", "time.dt=0.01", "check.exact=" + u};
  auto with = [&](const std::string& kind) {
    std::vector<std::string> sets = common;
    for (const char* face : {"x-", "x+", "y+", "z+"}) sets.push_back(std::string("boundary.") + face + "=" + kind);
    return test::run_example("heat_robin.ini", sets);
  };
  const physics::ErrorNorms robin = with("robin 0 ; 3 + x*t"), insulated = with("neumann 0");
  EXPECT_NEAR(robin.l2, insulated.l2, 1e-12 * insulated.l2);
  EXPECT_NEAR(robin.max, insulated.max, 1e-12 * insulated.max);
}

// A large h pins the face to u_inf: with u_inf the exact solution, the steady Robin
// solution tends to the Dirichlet one, its gap (about (alpha / h) du/dn on the face) falling
// with 1/h. (In a transient, h so large that tau 2 h / h_grid >> 1 leaves the face without
// the consistent intermediate values a Dirichlet face gets: docs/numerics.md.)
TEST(RobinFaces, LargeCoefficientTendsToDirichlet) {
  const std::string u = "(1 + x + x^2) * cos(y) * (2 + z)";
  auto run = [&](const std::string& face) {
    return test::run_example("poisson_robin.ini", {"boundary.x+=" + face, "boundary.z+=" + face});
  };
  const physics::ErrorNorms dirichlet = run("dirichlet " + u);
  const physics::ErrorNorms h4 = run("robin 1e4 ; " + u), h6 = run("robin 1e6 ; " + u);
  const double gap4 = std::fabs(h4.max - dirichlet.max), gap6 = std::fabs(h6.max - dirichlet.max);
  EXPECT_LT(gap6, 0.1 * gap4) << gap4 << " -> " << gap6;
}

// h < 0 somewhere on a face at the start, or not finite there: a deck error naming the face
// and what it found.
TEST(RobinFaces, NegativeOrNonFiniteCoefficientIsADeckError) {
  auto error_of = [](const std::string& face) -> std::string {
    try {
      test::run_example("heat_robin.ini", {"grid.n=9", "time.t_end=0.01", "boundary.x+=" + face});
    } catch (const io::DeckError& e) {
      return e.what();
    }
    return "";
  };
  const std::string negative = error_of("robin 1 - 2*y ; 0");
  EXPECT_NE(negative.find("boundary.x+"), std::string::npos) << negative;
  EXPECT_NE(negative.find("-1"), std::string::npos) << negative;
  EXPECT_NE(negative.find(">= 0"), std::string::npos) << negative;
  const std::string infinite = error_of("robin 1 / (y - 0.5) ; 0");
  EXPECT_NE(infinite.find("boundary.x+"), std::string::npos) << infinite;
  EXPECT_NE(infinite.find("inf"), std::string::npos) << infinite;
}

}  // namespace
}  // namespace adi3d
