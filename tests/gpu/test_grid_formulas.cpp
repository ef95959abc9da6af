// Grid formulas sampled on the GPU (issue 38 item 1: initial.u, check.exact,
// material.diffusivity) against the host's muparser sampling: values, the error u - f, the
// range, the record of a non-finite value, slabs of the z split (ghost planes wrapped on a
// periodic axis), and the material index built on the device.
//
// Tolerances: both sides evaluate the same expression in double with separate roundings
// (no FMA on either), at nodes of the same bits, but with different libraries for sin, exp,
// pow and the like (each within a few ulps); over the few operations of these formulas, with
// terms below 20, the doubles agree to 1e-13. Rounding to float then turns that into at most
// one ulp of the value where a double lies next to a rounding boundary: 4 float epsilons of
// (1 + |value|) leaves a margin. The device's slab and whole-grid samples run the same code
// at the same coordinates, so those agree to the bit.
#include "physics/formula.hpp"
#include "physics/grid_formula.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/material_index.hpp"
#include "tests/gpu/gpu_test_support.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace adi3d::test {
namespace {

template <class T>
double sample_tolerance(double value) {
  return std::is_same_v<T, float> ? 4 * std::numeric_limits<float>::epsilon() * (1 + std::fabs(value)) + 1e-13
                                  : 1e-13;
}

// Random-ish formulas of every construct the translation handles: smooth terms with random
// coefficients, powers, comparisons and the ternary, rint and sign (discontinuous at nodes:
// both sides see the same coordinates), min/max.
std::vector<std::string> random_formulas(std::mt19937& rng, int count) {
  std::uniform_real_distribution<double> c(-2.0, 2.0);
  auto num = [&] { return std::to_string(c(rng)); };
  const char* shapes[] = {
      "%s*sin(%s*x + y) * cos(%s*z) + %s*exp(-x*x - t)",
      "(%s + x)^2 - %s*y^3 + sqrt(1.5 + %s^2*z*z) * %s",
      "x < %s ? %s*y + t : (z > %s ? %s : x*y*z)",
      "rint(4*x) * %s + sign(y - %s) + abs(z - %s) * %s",
      "min(x, %s*y, z) + max(%s, t) + atan2(y, 1 + x*x) * %s + tanh(%s*z)",
      "log(2.5 + %s*x) + log10(3 + y) * %s + cosh(%s*z) / (2 + %s*t*t)",
  };
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) {
    std::string s = shapes[k % std::size(shapes)];
    for (std::size_t at; (at = s.find("%s")) != std::string::npos;) s.replace(at, 2, "(" + num() + ")");
    out.push_back(s);
  }
  return out;
}

// Grids of odd sizes, not multiples of the 128-thread rows, on [-0.4, 1.1]^3.
Grid3 odd_grid(std::array<int, 3> n, bool periodic_z) { return box_grid(n, -0.4, 1.5, periodic_z); }

template <class T>
class GridFormulaGpu : public CudaTest<T> {
 protected:
  // f sampled by GridFormula on the GPU backend and on the host (sample_slab), compared.
  void expect_samples_match(const std::string& text, const SlabDecomposition& slab, double t) {
    const physics::GridFormula<T> f(physics::Formula(text), slab, true);
    Array<T> dev = this->gpu_->allocate(slab.local.size());
    f.sample(t, dev.data(), *this->gpu_);
    ASSERT_TRUE(f.on_device()) << text;
    const std::vector<T> got = this->from_gpu(dev);
    std::vector<T> want(slab.local.size());
    ASSERT_FALSE(physics::sample_slab(f.formula(), slab, t, want.data())) << text;
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t p = 0; p < want.size(); ++p) {
      ASSERT_NEAR(double(got[p]), double(want[p]), sample_tolerance<T>(want[p])) << text << " at " << p;
      lo = std::min(lo, double(got[p]));
      hi = std::max(hi, double(got[p]));
    }
    // The range the kernel kept is that of its own samples, exactly.
    EXPECT_EQ(f.range()[0], lo) << text;
    EXPECT_EQ(f.range()[1], hi) << text;
    EXPECT_FALSE(f.first_non_finite()) << text;
  }
};
TYPED_TEST_SUITE(GridFormulaGpu, Precisions);

TYPED_TEST(GridFormulaGpu, RandomFormulasMatchTheHostOnOddGrids) {
  std::mt19937 rng(38);
  const std::vector<std::array<int, 3>> sizes = {{37, 11, 9}, {129, 3, 5}, {5, 130, 7}, {1, 1, 1}};
  for (const std::string& text : random_formulas(rng, 12))
    for (const auto& n : sizes) {
      const Grid3 g = odd_grid(n, false);
      this->expect_samples_match(text, whole_grid_slab(g, BoundarySpec{}), 0.37);
    }
}

// A rank's slab on the device: the planes of the whole grid it stands for, ghosts included
// (wrapped on a periodic axis), to the bit against the device's whole-grid samples, and
// within rounding of the host's.
TYPED_TEST(GridFormulaGpu, SlabsSampleTheWholeGridsPlanes) {
  using T = TypeParam;
  std::mt19937 rng(381);
  const std::string text = random_formulas(rng, 1)[0];
  for (bool periodic : {false, true}) {
    const Grid3 whole = odd_grid({33, 9, 14}, periodic);
    const physics::GridFormula<T> f_whole(physics::Formula(text), whole_grid_slab(whole, periodic_z_or_not(periodic)));
    Array<T> all = this->gpu_->allocate(whole.size());
    f_whole.sample(0.2, all.data(), *this->gpu_);
    const std::vector<T> all_host = this->from_gpu(all);
    for (int ranks : {2, 3, 4})
      for (int rank = 0; rank < ranks; ++rank) {
        const SlabDecomposition slab = decompose_slabs(whole, periodic_z_or_not(periodic), rank, ranks);
        this->expect_samples_match(text, slab, 0.2);
        const physics::GridFormula<T> f(physics::Formula(text), slab);
        Array<T> local = this->gpu_->allocate(slab.local.size());
        f.sample(0.2, local.data(), *this->gpu_);
        const std::vector<T> got = this->from_gpu(local);
        for (int k = 0; k < slab.local.n[2]; ++k)
          ASSERT_EQ(std::memcmp(got.data() + k * slab.plane(), all_host.data() + slab.whole_plane(k) * slab.plane(),
                                slab.plane() * sizeof(T)),
                    0)
              << "rank " << rank << " of " << ranks << ", local plane " << k << (periodic ? " periodic" : "");
      }
  }
}

// u - exact on the device: in double, rounded once, as the host forms it.
TYPED_TEST(GridFormulaGpu, ErrorsMatchTheHost) {
  using T = TypeParam;
  std::mt19937 rng(382);
  const Grid3 g = odd_grid({41, 13, 10}, false);
  const SlabDecomposition slab = whole_grid_slab(g, BoundarySpec{});
  const std::vector<T> u = random_field<T>(g.size(), this->rng_);
  Array<T> du = this->to_gpu(u);
  for (const std::string& text : random_formulas(rng, 6)) {
    const physics::GridFormula<T> exact(physics::Formula(text), slab);
    Array<T> error = this->gpu_->allocate(g.size());
    exact.sample_error(0.6, du.data(), error.data(), *this->gpu_);
    const std::vector<T> got = this->from_gpu(error);
    std::vector<T> want(g.size());
    ASSERT_FALSE(physics::sample_slab(exact.formula(), slab, 0.6, want.data(), u.data()));
    for (std::size_t p = 0; p < want.size(); ++p)
      ASSERT_NEAR(double(got[p]), double(want[p]), sample_tolerance<T>(want[p])) << text << " at " << p;
  }
}

// A formula infinite at one node (the grid's coordinates are exact in binary): the device
// names the node, time and value the host does, with the formula's key; a finite formula
// sampled later keeps no record.
TYPED_TEST(GridFormulaGpu, NonFiniteValuesAreRecordedAsOnTheHost) {
  using T = TypeParam;
  Grid3 g;
  g.n = {17, 9, 13};
  g.h = {0.125, 0.125, 0.125};
  const SlabDecomposition slab = whole_grid_slab(g, BoundarySpec{});
  const std::string text = "1 / (abs(x - 0.5) + abs(y - 0.25) + abs(z - 0.75)) + t";
  auto keyed = [&] {
    physics::Formula f(text);
    f.set_key("initial.u");
    return std::make_unique<physics::GridFormula<T>>(std::move(f), slab);
  };
  const auto on_device = keyed(), on_host = keyed();
  Array<T> a = this->gpu_->allocate(g.size());
  on_device->sample(0.5, a.data(), *this->gpu_);
  on_device->sample(0.75, a.data(), *this->gpu_);
  ASSERT_TRUE(on_device->on_device());
  Array<T> c = this->cpu_->allocate(g.size());
  on_host->sample(0.5, c.data(), *this->cpu_);
  const auto got = on_device->first_non_finite(), want = on_host->first_non_finite();
  ASSERT_TRUE(got);
  ASSERT_TRUE(want);
  // The deck error's text, key, node, time and value.
  EXPECT_EQ(std::string(physics::NonFiniteFormula(*got).what()), physics::NonFiniteFormula(*want).what());
  EXPECT_DOUBLE_EQ(got->x, 0.5);
  EXPECT_DOUBLE_EQ(got->y, 0.25);
  EXPECT_DOUBLE_EQ(got->z, 0.75);
  EXPECT_DOUBLE_EQ(got->t, 0.5) << "the first sampling's";

  // The error's sampling records f, not u - f.
  Array<T> err = this->gpu_->allocate(g.size());
  const auto exact = keyed();
  exact->sample_error(0.25, a.data(), err.data(), *this->gpu_);
  ASSERT_TRUE(exact->first_non_finite());
  EXPECT_DOUBLE_EQ(exact->first_non_finite()->t, 0.25);
}

// A value beyond float's range is not finite in a float run, on the device as on the host.
TYPED_TEST(GridFormulaGpu, FloatOverflowIsNotFinite) {
  using T = TypeParam;
  Grid3 g;
  g.n = {9, 5, 5};
  g.h = {0.125, 0.25, 0.25};
  const physics::GridFormula<T> f(physics::Formula("1e39 * x"), whole_grid_slab(g, BoundarySpec{}));
  Array<T> a = this->gpu_->allocate(g.size());
  f.sample(0.0, a.data(), *this->gpu_);
  EXPECT_EQ(f.first_non_finite().has_value(), (std::is_same_v<T, float>));
}

// The material index built on the device: every node's byte names its own value, the rows'
// padding is zero, the face table holds the harmonic means of the CPU rule, and a field of
// more than kMaxMaterials values (just more, or hundreds: the threads stop at a full table)
// is declined; the same steps as the host's index (whose numbering may differ).
TYPED_TEST(GridFormulaGpu, MaterialIndexOnTheDevice) {
  using T = TypeParam;
  std::mt19937 rng(383);
  for (const std::array<int, 3> n : {std::array<int, 3>{1, 1, 1}, {37, 6, 5}, {200, 3, 4}})
    for (int count : {1, 3, kMaxMaterials, kMaxMaterials + 1, 1000}) {
      std::uniform_real_distribution<double> value(0.01, 100.0);
      std::vector<T> values(count);
      for (T& v : values) v = static_cast<T>(value(rng));
      std::vector<T> alpha(static_cast<std::size_t>(n[0]) * n[1] * n[2]);
      // Runs of one value along x, as layered fields have, and every value somewhere.
      for (std::size_t p = 0; p < alpha.size(); ++p) alpha[p] = values[(p / 7 + p * p / 3) % count];
      for (int v = 0; v < count && v < static_cast<int>(alpha.size()); ++v) alpha[v] = values[v];
      const int distinct = static_cast<int>(std::min<std::size_t>(count, alpha.size()));
      Array<T> field = this->to_gpu(alpha);
      const MaterialArrays<T> m = index_materials(*this->gpu_, field.data(), n);
      if (distinct > kMaxMaterials) {
        EXPECT_EQ(m.count, 0) << distinct << " values";
        continue;
      }
      ASSERT_EQ(m.count, distinct);
      ASSERT_EQ(m.pitch, material_pitch(n[0]));
      std::vector<std::uint8_t> index(m.index.size());
      ASSERT_EQ(cudaMemcpy(index.data(), m.index.data(), index.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      std::vector<T> table(m.face_mean.size());
      this->gpu_->download(m.face_mean.data(), table.data(), table.size());
      // The material values, from the diagonal (the harmonic mean of a value with itself).
      for (std::size_t r = 0; r < static_cast<std::size_t>(n[1]) * n[2]; ++r)
        for (int i = 0; i < m.pitch; ++i) {
          const std::uint8_t mat = index[r * m.pitch + i];
          if (i >= n[0]) {
            ASSERT_EQ(mat, 0) << "padding";
            continue;
          }
          ASSERT_LT(mat, m.count);
          ASSERT_EQ(table[mat * kMaxMaterials + mat], alpha[r * n[0] + i]) << "row " << r << " node " << i;
        }
      for (int a = 0; a < m.count; ++a)
        for (int b = 0; b < m.count; ++b)
          EXPECT_EQ(table[a * kMaxMaterials + b], harmonic_mean(table[a * kMaxMaterials + a], table[b * kMaxMaterials + b]));
    }
}

}  // namespace
}  // namespace adi3d::test
