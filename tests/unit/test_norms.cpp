// Norms of fields that hold a NaN or an infinity (solvers/nan_norms.hpp): the max norm must
// say so, where a max reduction alone had dropped the NaN and reported max error 0. And the
// CPU backend's largest jump of alpha inside planes.
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace adi3d {
namespace {

TEST(Norms, ANanMakesEveryNormNan) {
  auto cpu = make_cpu_backend<double>();
  std::vector<double> x(1001, 0.5), y(1001, 0.25);
  x[700] = std::numeric_limits<double>::quiet_NaN();
  const Norms n = cpu->difference_norms(x.data(), y.data(), x.size());
  EXPECT_TRUE(std::isnan(n.max_abs));
  EXPECT_TRUE(std::isnan(n.sum_squares));
  const physics::ErrorNorms e = physics::to_error_norms(n, x.size());
  EXPECT_TRUE(std::isnan(e.l2));
  EXPECT_TRUE(std::isnan(e.max));
}

TEST(Norms, AnInfinityIsTheMax) {
  auto cpu = make_cpu_backend<float>();
  std::vector<float> x(513, -2.0f);
  x[3] = -std::numeric_limits<float>::infinity();
  const Norms n = cpu->difference_norms(x.data(), nullptr, x.size());
  EXPECT_EQ(n.max_abs, std::numeric_limits<double>::infinity());
  x[3] = 7.0f;
  const Norms finite = cpu->difference_norms(x.data(), nullptr, x.size());
  EXPECT_EQ(finite.max_abs, 7.0);
  EXPECT_DOUBLE_EQ(finite.sum_abs, 512 * 2.0 + 7.0);
}

// The Krylov preconditioner's test of a field's jumps inside planes: neighbours along x and
// y count, along z and across row or plane ends (neighbours in memory only) they do not.
TEST(Norms, InPlaneJumpTakesXAndYNeighboursOnly) {
  auto cpu = make_cpu_backend<double>();
  const std::array<int, 3> n{5, 4, 3};
  std::vector<double> alpha(60, 2.0);
  EXPECT_EQ(cpu->in_plane_jump(alpha.data(), n), 1.0);
  for (int e = 40; e < 60; ++e) alpha[e] = 1000;  // the top plane: a jump along z
  for (int j = 0; j < 4; ++j) alpha[4 + 5 * j] = 3;  // the last column: after each row end
  EXPECT_EQ(cpu->in_plane_jump(alpha.data(), n), 1.5);
  alpha[2 * 5 + 1 + 20] = 0.5;  // node (1, 2, 1): 4 times its neighbours along x and y
  EXPECT_EQ(cpu->in_plane_jump(alpha.data(), n), 4.0);
  alpha[3 * 5 + 1 + 20] = 0.25;  // its y neighbour, 8 times its own x neighbours
  EXPECT_EQ(cpu->in_plane_jump(alpha.data(), n), 8.0);
}

}  // namespace
}  // namespace adi3d
