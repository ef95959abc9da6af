// Grid formulas sampled where the backend is (issue 38 item 1), their host side: the
// sampling kernels' source, the order-preserving keys of their range record, slab sampling
// at the whole grid's coordinates (what the kernels reproduce), GridFormula on the CPU
// backend, and the material index built from backend memory. The GPU side is compared with
// this in tests/gpu/test_grid_formulas.cpp.
#include "physics/grid_formula.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/material_index.hpp"
#include "solvers/rtc/kernel_source.hpp"
#include "tests/unit/grid_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace adi3d::physics {
namespace {

template <class T>
class GridFormulaTest : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GridFormulaTest, Precisions);

Grid3 grid_of(std::array<int, 3> n, bool periodic_z) { return test::box_grid(n, -0.3, 1.3, periodic_z); }

BoundarySpec faces(bool periodic_z) { return test::periodic_z_or_not(periodic_z); }

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

TEST(FormulaKernels, HoldTheExpressionOnceAndBothKernels) {
  const std::string src = rtc::formula_kernels("(sin(x) + y * z * t)", "float");
  EXPECT_EQ(src.rfind("typedef float real;", 0), 0u) << src.substr(0, 40);
  const std::size_t at = src.find("(sin(x) + y * z * t)");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(src.find("(sin(x) + y * z * t)", at + 1), std::string::npos) << "written once, in formula()";
  EXPECT_NE(src.find("extern \"C\" __global__ void sample_grid("), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void sample_face("), std::string::npos);
  EXPECT_EQ(rtc::formula_kernels("x", "double").rfind("typedef double real;", 0), 0u);
}

// The range record's keys: unsigned order is the order of the values, and they decode.
TEST(FormulaKernels, RangeKeysKeepTheOrderOfValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double ordered[] = {-inf, -1e300, -2.5, -std::numeric_limits<double>::denorm_min(), -0.0, 0.0,
                            std::numeric_limits<double>::denorm_min(), 1e-300, 3.0, 1e300, inf};
  for (std::size_t i = 0; i + 1 < std::size(ordered); ++i)
    EXPECT_LT(rtc::range_key(ordered[i]), rtc::range_key(ordered[i + 1])) << ordered[i] << " < " << ordered[i + 1];
  for (double v : ordered) {
    const double back = rtc::range_value(rtc::range_key(v));
    EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0) << v;
  }
}

// Each rank's slab, ghost planes included, holds the whole grid's samples of its planes to
// the bit (a periodic axis's ghosts those of the planes they wrap to); with a minuend, the
// difference in double rounded once.
TYPED_TEST(GridFormulaTest, SlabsSampleTheWholeGridsNodes) {
  using T = TypeParam;
  const Formula f("sin(3*x) * cos(2*y) + z^2 - 0.5*x*z");
  for (bool periodic : {false, true}) {
    const Grid3 whole = grid_of({7, 5, 11}, periodic);
    std::vector<T> all(whole.size());
    ASSERT_FALSE(sample_grid(f, whole, 0.25, all.data()));
    for (int ranks : {1, 2, 3}) {
      for (int rank = 0; rank < ranks; ++rank) {
        const SlabDecomposition slab = decompose_slabs(whole, faces(periodic), rank, ranks);
        std::vector<T> local(slab.local.size()), want(slab.local.size());
        ASSERT_FALSE(sample_slab(f, slab, 0.25, local.data()));
        for (int k = 0; k < slab.local.n[2]; ++k)
          std::memcpy(want.data() + k * slab.plane(), all.data() + slab.whole_plane(k) * slab.plane(),
                      slab.plane() * sizeof(T));
        EXPECT_TRUE(same_bits(local, want)) << "rank " << rank << " of " << ranks << (periodic ? " periodic" : "");

        std::vector<T> u(local.size()), error(local.size());
        for (std::size_t p = 0; p < u.size(); ++p) u[p] = static_cast<T>(0.01 * static_cast<double>(p % 37));
        ASSERT_FALSE(sample_slab(f, slab, 0.25, error.data(), u.data()));
        for (int k = 0; k < slab.local.n[2]; ++k)
          for (int j = 0; j < whole.n[1]; ++j)
            for (int i = 0; i < whole.n[0]; ++i) {
              const std::size_t p = slab.local.index(i, j, k);
              const double exact =
                  f(whole.coord(0, i), whole.coord(1, j), whole.coord(2, slab.whole_plane(k)), 0.25);
              ASSERT_EQ(error[p], static_cast<T>(static_cast<double>(u[p]) - exact)) << p;
            }
      }
    }
  }
}

// On the CPU backend GridFormula is muparser on the host's threads: the samples of
// sample_grid, the error u - f, the range where kept, and the first bad node with its key.
TYPED_TEST(GridFormulaTest, SamplesOnTheCpuBackendAsTheHostLoops) {
  using T = TypeParam;
  const std::unique_ptr<Backend<T>> cpu = make_cpu_backend<T>();
  const Grid3 g = grid_of({9, 6, 5}, false);
  const SlabDecomposition slab = whole_grid_slab(g, faces(false));
  Formula f("2 + sin(x - y) * exp(-z)");
  f.set_key("material.diffusivity");
  const GridFormula<T> alpha(std::move(f), slab, true);
  Array<T> values = cpu->allocate(g.size());
  alpha.sample(0.0, values.data(), *cpu);
  std::vector<T> want(g.size());
  sample_grid(alpha.formula(), g, 0.0, want.data());
  const std::vector<T> got(values.data(), values.data() + g.size());
  EXPECT_TRUE(same_bits(got, want));
  const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
  EXPECT_EQ(alpha.range()[0], double(*lo));
  EXPECT_EQ(alpha.range()[1], double(*hi));
  EXPECT_FALSE(alpha.first_non_finite());
  EXPECT_FALSE(alpha.on_device());

  // u - f of f's own samples: their rounding to T (0 in double).
  Array<T> error = cpu->allocate(g.size());
  alpha.sample_error(0.0, values.data(), error.data(), *cpu);
  std::vector<T> want_error(g.size());
  sample_slab(alpha.formula(), slab, 0.0, want_error.data(), got.data());
  EXPECT_TRUE(same_bits(std::vector<T>(error.data(), error.data() + g.size()), want_error));
  const double rounding = std::is_same_v<T, float> ? 3e-7 : 0.0;  // half an ulp of values in [1, 3]
  for (std::size_t p = 0; p < g.size(); ++p) ASSERT_LE(std::fabs(double(error.data()[p])), rounding) << p;

  // NaN from the plane k = 3 (z = 0.675) on: the first bad node is (0, 0, 3).
  Formula bad("z > 0.6 ? sqrt(-1) : x + t");
  bad.set_key("check.exact");
  const GridFormula<T> exact(std::move(bad), slab);
  exact.sample_error(0.5, values.data(), error.data(), *cpu);
  const auto s = exact.first_non_finite();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->key, "check.exact");
  EXPECT_DOUBLE_EQ(s->x, g.coord(0, 0));
  EXPECT_DOUBLE_EQ(s->y, g.coord(1, 0));
  EXPECT_DOUBLE_EQ(s->z, g.coord(2, 3));
  EXPECT_DOUBLE_EQ(s->t, 0.5);
  EXPECT_TRUE(std::isnan(s->value));
}

// A constant formula fills (no code to compile): its value, its error, and in float a
// constant beyond float's range is a non-finite sample at the slab's first node.
TYPED_TEST(GridFormulaTest, ConstantsFill) {
  using T = TypeParam;
  const std::unique_ptr<Backend<T>> cpu = make_cpu_backend<T>();
  const Grid3 g = grid_of({4, 3, 6}, false);
  const SlabDecomposition slab = decompose_slabs(g, faces(false), 1, 2);
  const GridFormula<T> two(Formula("2"), slab, true);
  Array<T> a = cpu->allocate(slab.local.size());
  two.sample(0.0, a.data(), *cpu);
  for (std::size_t p = 0; p < slab.local.size(); ++p) ASSERT_EQ(a.data()[p], T(2));
  EXPECT_EQ(two.range()[0], 2.0);
  Array<T> e = cpu->allocate(slab.local.size());
  two.sample_error(0.0, a.data(), e.data(), *cpu);
  for (std::size_t p = 0; p < slab.local.size(); ++p) ASSERT_EQ(e.data()[p], T(0));

  Formula huge("1e300");
  huge.set_key("initial.u");
  const GridFormula<T> big(std::move(huge), slab);
  big.sample(0.0, a.data(), *cpu);
  const auto s = big.first_non_finite();
  EXPECT_EQ(s.has_value(), (std::is_same_v<T, float>));
  if (s) {
    EXPECT_EQ(s->key, "initial.u");
    EXPECT_DOUBLE_EQ(s->z, g.coord(2, slab.k_begin - slab.ghost_lo));
  }
}

// From backend memory: the CPU backend reads no material index and builds none.
TYPED_TEST(GridFormulaTest, NoMaterialIndexOnTheCpuBackend) {
  using T = TypeParam;
  const std::unique_ptr<Backend<T>> cpu = make_cpu_backend<T>();
  std::vector<T> alpha(7 * 5 * 4, T(2));
  Array<T> field = cpu->allocate(alpha.size());
  cpu->upload(alpha.data(), field.data(), alpha.size());
  EXPECT_FALSE(cpu->reads_material_index());
  EXPECT_EQ(index_materials(*cpu, field.data(), {7, 5, 4}).count, 0);
}

}  // namespace
}  // namespace adi3d::physics
