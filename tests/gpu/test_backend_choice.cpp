// Backend choice against the GPU's free memory: a grid that cannot fit is refused before
// anything is allocated (backend = cuda) or runs on the CPU (backend = auto).
#include "app/backend_choice.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"

#include <gtest/gtest.h>

namespace adi3d::test {
namespace {

class BackendChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(BackendChoice, GridTooLargeForTheGpuIsRefusedWithSizes) {
  const std::size_t too_much = cuda_free_bytes(0) + (std::size_t(1) << 34);
  try {
    app::choose_backend<float>(io::BackendChoice::cuda, 0, too_much);
    FAIL() << "accepted";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("needs about"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GiB free"), std::string::npos) << e.what();
  }
  EXPECT_EQ(app::choose_backend<float>(io::BackendChoice::automatic, 0, too_much)->kind(), BackendKind::cpu);
  EXPECT_EQ(app::choose_backend<float>(io::BackendChoice::automatic, 0, 1 << 20)->kind(), BackendKind::cuda);
}

// auto leaves a run the CPU finishes before the GPU has started to the CPU (a 33^3 deck of
// 100 steps), a large one to the GPU; cuda insists.
TEST_F(BackendChoice, AutoLeavesSmallRunsToTheCpu) {
  const double small = 33.0 * 33 * 33 * 100, large = 512.0 * 512 * 512 * 100;
  EXPECT_EQ(app::choose_backend<float>(io::BackendChoice::automatic, 0, 1 << 20, small)->kind(), BackendKind::cpu);
  EXPECT_EQ(app::choose_backend<float>(io::BackendChoice::automatic, 0, 1 << 20, large)->kind(), BackendKind::cuda);
  EXPECT_EQ(app::choose_backend<float>(io::BackendChoice::cuda, 0, 1 << 20, small)->kind(), BackendKind::cuda);
}

TEST_F(BackendChoice, EstimateCountsFieldsAndScratch) {
  Grid3 g;
  g.n = {100, 10, 10};
  EXPECT_EQ(estimate_bytes(g, 3, 8), std::size_t(5) * 10000 * 8);
  EXPECT_GT(cuda_free_bytes(0), std::size_t(1) << 30);
}

}  // namespace
}  // namespace adi3d::test
