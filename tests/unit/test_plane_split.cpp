// How the plane-streaming kernels split z-planes among blocks
// (solvers/cuda/plane_split.hpp), checked without a GPU: every range is non-empty and the planes are covered; a grid
// whose slabs already fill a wave keeps one range per slab; slabs that fill a wave only
// in part are split until the waves are busy; the split is the one with the fewest ranges
// among those within 3% of the least cost.
#include "solvers/cuda/plane_split.hpp"

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

// Runs of persistent blocks (plane_run) and their segments (plane_segment), as the
// one-kernel x passes walk them, in groups of planes: the runs follow one another and
// differ in length by one at most; each segment lies in one slab and one group, the
// segments follow one another in the units' order, and all of them cover every (slab,
// plane) once.
TEST(PlaneSplit, RunsCoverTheUnitsInSegmentsOfOneSlab) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> slabs_of(1, 300), planes_of(1, 1100), blocks_of(1, 600), groups_of(1, 9);
  for (int trial = 0; trial < 300; ++trial) {
    const int slabs = slabs_of(rng), planes = planes_of(rng);
    const long long units = static_cast<long long>(slabs) * planes;
    const int blocks = static_cast<int>(std::min<long long>(blocks_of(rng), units));
    const int groups = trial % 2 ? cuda::plane_groups(slabs, planes, blocks) : std::min(planes, groups_of(rng));
    ASSERT_GE(groups, 1);
    ASSERT_LE(groups, planes);
    std::vector<int> seen(static_cast<std::size_t>(units), 0);
    auto group_of = [&](int p) {  // plane p (from 0)
      int g = 0;
      while (static_cast<long long>(planes) * (g + 1) / groups <= p) ++g;
      return g;
    };
    long long next = 0, shortest = units, longest = 0;
    for (int b = 0; b < blocks; ++b) {
      const cuda::PlaneRun run = cuda::plane_run(slabs, planes, blocks, b);
      ASSERT_EQ(run.begin, next) << slabs << " " << planes << " " << blocks << " " << b;
      ASSERT_GT(run.end, run.begin);
      shortest = std::min(shortest, run.end - run.begin);
      longest = std::max(longest, run.end - run.begin);
      long long u = run.begin;
      while (u < run.end) {
        const cuda::PlaneSegment seg = cuda::plane_segment(u, run.end, planes, slabs, groups);
        ASSERT_GE(seg.slab, 0);
        ASSERT_LT(seg.slab, slabs);
        ASSERT_GE(seg.kb, 1);
        ASSERT_GT(seg.ke, seg.kb);
        ASSERT_LE(seg.ke, planes + 1);
        ASSERT_EQ(group_of(seg.kb - 1), group_of(seg.ke - 2));  // one group
        for (int k = seg.kb; k < seg.ke; ++k) {
          const std::size_t unit = static_cast<std::size_t>(seg.slab) * planes + k - 1;
          ASSERT_EQ(seen[unit]++, 0) << "unit streamed twice: slab " << seg.slab << " plane " << k;
        }
        u += seg.ke - seg.kb;
      }
      ASSERT_EQ(u, run.end);
      next = run.end;
    }
    ASSERT_EQ(next, units);
    ASSERT_LE(longest - shortest, 1);
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), units);
  }
  // 512^3 float on an H100: 34 slabs of 15 lines on 132 SMs, 131-132 planes a block, in 4
  // groups of 127-128 planes; block 1 goes on from slab 1's planes 128-131 to slab 2's.
  const cuda::PlaneRun run = cuda::plane_run(34, 510, 132, 131);
  EXPECT_EQ(run.end - run.begin, 132);
  EXPECT_EQ(run.end, 34 * 510);
  EXPECT_EQ(cuda::plane_groups(34, 510, 132), 4);
  const cuda::PlaneRun one = cuda::plane_run(34, 510, 132, 1);
  const cuda::PlaneSegment a = cuda::plane_segment(one.begin, one.end, 510, 34, 4);
  EXPECT_EQ(a.slab, 1);
  EXPECT_EQ(a.kb, 1 + 131 - 127);
  EXPECT_EQ(a.ke, 128);
  const cuda::PlaneSegment b = cuda::plane_segment(one.begin + a.ke - a.kb, one.end, 510, 34, 4);
  EXPECT_EQ(b.slab, 2);
  EXPECT_EQ(b.kb, 1);
}

}  // namespace
}  // namespace adi3d
