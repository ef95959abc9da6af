// Poisson in float and in mixed precision (issue 39 item 3) on the CUDA backend: the CPU's
// checks (tests/regression/poisson_precision_checks.hpp), against the CPU double solve.
// The mixed solve's float sweeps and double residual run on two backends of one device.
#include "tests/regression/poisson_precision_checks.hpp"

namespace adi3d::test {
namespace {

class CudaPrecision : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

class CudaMixedPoisson : public ::testing::TestWithParam<PrecisionCase> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// The GPU's float sweeps round otherwise than the CPU's double iteration (FMA, hardware
// reciprocals, PCR): up to a cycle more, and the fields within the residual's reach.
TEST_P(CudaMixedPoisson, ReachesTenDigitsAndTheCpuDoubleSolution) {
  expect_mixed_reaches_ten_digits(GetParam(), BackendKind::cuda, 8, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Decks, CudaMixedPoisson, ::testing::ValuesIn(mixed_precision_cases()));

TEST_F(CudaPrecision, FloatStagnatedSolveKeepsItsIterate) {
  expect_float_stagnation_keeps_its_iterate(BackendKind::cuda);
}

TEST_F(CudaPrecision, FloatDefaultToleranceIsReached) { expect_float_default_tolerance_reached(BackendKind::cuda); }

}  // namespace
}  // namespace adi3d::test
