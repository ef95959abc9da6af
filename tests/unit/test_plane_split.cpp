// How the plane-streaming kernels split z-planes among blocks
// (solvers/cuda/common/plane_split.hpp), checked without a GPU: every range is non-empty and the planes are covered; a grid
// whose slabs already fill a wave keeps one range per slab; slabs that fill a wave only
// in part are split until the waves are busy; the split is the one with the fewest ranges
// among those within 3% of the least cost. The aligned tasks of persistent blocks cover
// every unit once.
#include "solvers/cuda/common/plane_split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace adi3d {
namespace {

using cuda::ring_planes_per_block;

// The share of block slots that the grid's waves keep busy on planes (halo left out).
double busy_share(int tiles, int planes, int resident, int kseg) {
  const long long ranges = (planes + kseg - 1) / kseg;
  const long long blocks = tiles * ranges;
  const long long waves = (blocks + resident - 1) / resident;
  return static_cast<double>(tiles) * planes / (static_cast<double>(waves) * resident * kseg);
}

TEST(PlaneSplit, GridsOfTheH100) {
  // 132 SMs, one block per SM. 512^3 float, blocks of 16 lines: 32 slabs in 4 ranges (one
  // wave, as before the cost model).
  EXPECT_EQ(ring_planes_per_block(32, 510, 132), 128);
  // 128 slabs fill a wave on their own: one range each.
  EXPECT_EQ(ring_planes_per_block(128, 510, 132), 510);
  // 640^3 float, blocks of 8 lines: 80 slabs left 52 SMs idle with one range each.
  const int kseg = ring_planes_per_block(80, 638, 132);
  EXPECT_LT(kseg, 638);
  EXPECT_GT(busy_share(80, 638, 132, kseg), 0.9);
  EXPECT_LT(busy_share(80, 638, 132, 638), 0.62);
}

TEST(PlaneSplit, CoversThePlanesWithinTheLeastCost) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> tiles_of(1, 300), planes_of(1, 1100), resident_of(1, 600);
  for (int trial = 0; trial < 300; ++trial) {
    const int tiles = tiles_of(rng), planes = planes_of(rng), resident = resident_of(rng);
    const int kseg = ring_planes_per_block(tiles, planes, resident);
    ASSERT_GE(kseg, 1);
    ASSERT_LE(kseg, planes);
    // The ranges of kseg planes cover the planes and none is empty.
    const int ranges = (planes + kseg - 1) / kseg;
    ASSERT_GT(planes, (ranges - 1) * kseg) << tiles << " " << planes << " " << resident;
    // Its cost (waves x (planes per range + 3)) against every split.
    auto cost = [&](int k) {
      const long long blocks = static_cast<long long>(tiles) * ((planes + k - 1) / k);
      return static_cast<double>((blocks + resident - 1) / resident) * (k + 3);
    };
    double best = cost(planes);
    int fewest_ok = 0;
    for (int split = 1; split <= planes; ++split) best = std::min(best, cost((planes + split - 1) / split));
    for (int split = 1; split <= planes && !fewest_ok; ++split)
      if (cost((planes + split - 1) / split) <= 1.03 * best) fewest_ok = split;
    ASSERT_LE(cost(kseg), 1.03 * best) << tiles << " " << planes << " " << resident;
    ASSERT_EQ(kseg, (planes + fewest_ok - 1) / fewest_ok) << tiles << " " << planes << " " << resident;
  }
}

TEST(PlaneSplit, DegenerateGrids) {
  EXPECT_EQ(ring_planes_per_block(1, 1, 1), 1);
  EXPECT_EQ(ring_planes_per_block(5, 0, 10), 1);
  EXPECT_EQ(ring_planes_per_block(0, 7, 10), 7);
  EXPECT_EQ(ring_planes_per_block(3, 7, 0), 7);
}

// Aligned tasks (plane_tasks, PlaneTasks::segment), as the one-kernel x passes walk them: block b
// takes tasks b, b + blocks, ...; every task lies in one slab and one group of planes,
// and all of them cover every (slab, plane) once; the tasks of a whole wave are whole
// groups, and no wave asks for more blocks than are resident.
TEST(PlaneSplit, AlignedTasksCoverTheUnitsOnce) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> slabs_of(1, 300), planes_of(1, 1100), resident_of(1, 600);
  for (int trial = 0; trial < 300; ++trial) {
    const int slabs = slabs_of(rng), planes = planes_of(rng), resident = resident_of(rng);
    const cuda::PlaneTasks tasks = cuda::plane_tasks(slabs, planes, resident);
    ASSERT_GE(tasks.groups, 1);
    ASSERT_LE(tasks.groups, planes);
    ASSERT_GE(tasks.blocks, 1);
    ASSERT_LE(tasks.blocks, resident);
    ASSERT_EQ(tasks.full % tasks.blocks, 0);
    ASSERT_GE(tasks.split, 1);
    const long long units = static_cast<long long>(slabs) * planes;
    std::vector<int> seen(static_cast<std::size_t>(units), 0);
    for (int b = 0; b < tasks.blocks; ++b)
      for (long long t = b; t < tasks.count(); t += tasks.blocks) {
        const cuda::PlaneSegment seg = tasks.segment(t);
        ASSERT_GE(seg.slab, 0);
        ASSERT_LT(seg.slab, slabs);
        ASSERT_GE(seg.kb, 1);
        ASSERT_GT(seg.ke, seg.kb) << slabs << " " << planes << " " << resident << " task " << t;
        ASSERT_LE(seg.ke, planes + 1);
        for (int k = seg.kb; k < seg.ke; ++k)
          ASSERT_EQ(seen[static_cast<std::size_t>(seg.slab) * planes + k - 1]++, 0)
              << "unit twice: slab " << seg.slab << " plane " << k;
      }
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), units) << slabs << " " << planes << " " << resident;
  }
  // 512^3 float alpha stencil on an H100: 51 slabs of 10 lines, 132 blocks; 3 groups of
  // 170 planes, a whole wave of 132 tasks, then the 21 tasks left in 6 parts of 28-29
  // planes each (126 blocks).
  const cuda::PlaneTasks t = cuda::plane_tasks(51, 510, 132);
  EXPECT_EQ(t.groups, 3);
  EXPECT_EQ(t.blocks, 132);
  EXPECT_EQ(t.full, 132);
  EXPECT_EQ(t.split, 6);
  EXPECT_EQ(t.count(), 132 + 21 * 6);
  const cuda::PlaneSegment neighbour = t.segment(52);  // slab 1 of group 1
  EXPECT_EQ(neighbour.slab, 1);
  EXPECT_EQ(neighbour.kb, 171);
  EXPECT_EQ(neighbour.ke, 341);
  const cuda::PlaneSegment part = t.segment(132 + 6 + 1);  // task 133, part 1
  EXPECT_EQ(part.slab, 133 - 102);
  EXPECT_EQ(part.kb, 1 + 340 + 28);
  EXPECT_EQ(part.ke, 1 + 340 + 56);
}

}  // namespace
}  // namespace adi3d
