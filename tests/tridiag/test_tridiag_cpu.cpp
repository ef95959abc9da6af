// solve_cpu against the dense oracle: random diagonally dominant systems of many sizes
// (1, 2, 3, non-powers of two), both layouts, cyclic or not, float and double.
#include "solvers/tridiag/tuning_file.hpp"
#include "tridiag_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include <tuple>

namespace {

using adi3d::test::HostBatch;
using adi3d::tridiag::Layout;

template <class T>
class TridiagCpu : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TridiagCpu, ValueTypes);

template <class T>
void check_against_dense(long n, long count, Layout layout, bool cyclic, unsigned seed) {
  HostBatch<T> hb(n, count, layout, cyclic, seed);
  HostBatch<T> orig = hb;
  adi3d::tridiag::solve_cpu(hb.view());
  for (long s = 0; s < count; ++s) {
    const std::vector<double> ref = orig.reference(s);
    double err = 0, nrm = 0;
    for (long i = 0; i < n; ++i) {
      const double x = hb.d[hb.at(s, i)];
      err = std::max(err, std::fabs(x - ref[static_cast<std::size_t>(i)]));
      nrm = std::max(nrm, std::fabs(ref[static_cast<std::size_t>(i)]));
    }
    ASSERT_LE(err, 10 * adi3d::test::tolerance<T>() * std::max(1.0, nrm))
        << "n=" << n << " count=" << count << " layout=" << static_cast<int>(layout) << " cyclic=" << cyclic
        << " system " << s;
  }
}

TYPED_TEST(TridiagCpu, MatchesDenseReference) {
  unsigned seed = 1;
  for (long n : {1L, 2L, 3L, 4L, 5L, 7L, 16L, 31L, 33L, 100L, 257L})
    for (long count : {1L, 3L, 70L})
      for (Layout layout : {Layout::contiguous, Layout::interleaved})
        for (bool cyclic : {false, true}) check_against_dense<TypeParam>(n, count, layout, cyclic, seed++);
}

TYPED_TEST(TridiagCpu, CornerEntriesIgnoredWhenNotCyclic) {
  HostBatch<TypeParam> hb(9, 4, Layout::contiguous, false, 7);
  HostBatch<TypeParam> garbage = hb;
  for (long s = 0; s < 4; ++s) {
    garbage.a[garbage.at(s, 0)] = TypeParam(1e30);
    garbage.c[garbage.at(s, 8)] = TypeParam(-1e30);
  }
  adi3d::tridiag::solve_cpu(hb.view());
  adi3d::tridiag::solve_cpu(garbage.view());
  for (std::size_t i = 0; i < hb.d.size(); ++i) EXPECT_EQ(hb.d[i], garbage.d[i]);
}

TEST(TridiagCpu, EmptyBatchAndBadSizes) {
  adi3d::tridiag::TridiagBatch<double> bt{};
  bt.n = 4;
  bt.count = 0;
  EXPECT_NO_THROW(adi3d::tridiag::solve_cpu(bt));
  bt.n = 0;
  bt.count = 1;
  EXPECT_THROW(adi3d::tridiag::solve_cpu(bt), std::invalid_argument);
}

// Every stage-1 method and base kernel survives a tuning-file round trip.
TEST(TridiagTuningFile, RoundTripEveryMethod) {
  using adi3d::tridiag::BaseKernel;
  using adi3d::tridiag::Stage1Method;
  const std::string path = ::testing::TempDir() + "tridiag_tuning_roundtrip.json";
  std::vector<adi3d::tridiag::TuningEntry> entries;
  int k = 0;
  for (Stage1Method s1 : {Stage1Method::partition, Stage1Method::pcr, Stage1Method::reg_partition})
    for (BaseKernel b : {BaseKernel::pcr_thomas, BaseKernel::thread_thomas, BaseKernel::partition,
                         BaseKernel::reg_partition}) {
      adi3d::tridiag::TridiagPolicy p;
      p.stage1 = s1;
      p.base = b;
      p.base_chunk = 4 + k;
      entries.push_back({"device " + std::to_string(k++), "float", p, "test"});
    }
  adi3d::tridiag::write_tuning_file(path, entries);
  const auto back = adi3d::tridiag::read_tuning_file(path);
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].device, entries[i].device);
    EXPECT_EQ(adi3d::tridiag::to_string(back[i].policy), adi3d::tridiag::to_string(entries[i].policy));
  }
  std::remove(path.c_str());
}

}  // namespace
