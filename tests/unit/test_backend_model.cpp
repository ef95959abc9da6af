// auto's model of when the CPU finishes sooner than a GPU (app/backend_choice.hpp), against
// the runs it was measured on (docs/perf/auto_backend_h100.txt, 16 threads, 100 steps):
// the 33^3 and 65^3 decks ran faster on the CPU, 129^3 about as fast; 512^3 is the GPU's.
#include "app/backend_choice.hpp"

#include <gtest/gtest.h>

namespace adi3d {
namespace {

double point_steps(double n, double steps) { return n * n * n * steps; }

TEST(BackendModel, SmallRunsTakeTheCpuLargeOnesTheGpu) {
  EXPECT_TRUE(app::cpu_finishes_sooner(point_steps(33, 100), 16));
  EXPECT_TRUE(app::cpu_finishes_sooner(point_steps(65, 100), 16));
  EXPECT_FALSE(app::cpu_finishes_sooner(point_steps(512, 100), 16));
  EXPECT_FALSE(app::cpu_finishes_sooner(point_steps(129, 1000), 16));
}

TEST(BackendModel, FewerThreadsHandOverToTheGpuSooner) {
  const double work = point_steps(97, 100);
  EXPECT_TRUE(app::cpu_finishes_sooner(work, 16));
  EXPECT_FALSE(app::cpu_finishes_sooner(work, 1));
}

TEST(BackendModel, UnknownWorkTakesTheGpu) { EXPECT_FALSE(app::cpu_finishes_sooner(0, 16)); }

}  // namespace
}  // namespace adi3d
