// Norms of fields that hold a NaN or an infinity (solvers/nan_norms.hpp): the max norm must
// say so, where a max reduction alone had dropped the NaN and reported max error 0.
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace adi3d
