// A run's grid formulas on the GPU (issue 38 item 1), through the run's own set-up: the
// errors against check.exact reduced on the device equal the host's within rounding, a
// diffusivity formula is sampled on the device (its values, its range), and a formula that
// is not finite at a node is the same deck error on the GPU as on the CPU.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"
#include "physics/grid_functions.hpp"
#include "tests/gpu/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace adi3d::test {
namespace {

template <class T>
class DeviceFormulaRun : public CudaTest<T> {
 protected:

  static std::vector<std::string> overrides(std::vector<std::string> sets) {
    sets.push_back(std::string("solver.precision=") + (std::is_same_v<T, float> ? "float" : "double"));
    sets.push_back("output.dir=" + (std::filesystem::temp_directory_path() / "adi3d_device_formula_runs").string());
    return sets;
  }
  static io::Deck deck(const std::string& name, const std::vector<std::string>& sets) {
    return io::Deck::load(std::string(ADI3D_SOURCE_DIR) + "/inputs/" + name, overrides(sets));
  }

  // The message a deck's set-up and short heat run end with on `backend`, or "" where
  // they end well: NonFiniteFormula (the run's deck error) or a DeckError.
  std::string failure(const std::string& name, const std::vector<std::string>& sets, Backend<T>& backend) {
    const io::Deck d = deck(name, sets);
    const io::RunConfig config = io::read_run_config(d);
    try {
      app::ProblemSetup<T> problem = app::setup_problem<T>(d, config);
      app::load_diffusivity(d, problem, backend);
      app::run_heat(config, problem, backend, false);
    } catch (const physics::NonFiniteFormula& e) {
      return e.what();
    } catch (const io::DeckError& e) {
      return e.what();
    }
    return "";
  }
};
TYPED_TEST_SUITE(DeviceFormulaRun, Precisions);

// The same field's errors against heat_sine's exact solution, reduced on each backend: the
// exact values differ by the libraries' few ulps, the errors u - exact by at most one ulp
// of T where that moves a rounding, and the sums by their order: 1e-6 of the norms in float
// (errors here are O(1): 8 float ulps), 1e-12 in double.
TYPED_TEST(DeviceFormulaRun, ErrorNormsOnTheDeviceMatchTheHost) {
  using T = TypeParam;
  const io::Deck d = this->deck("heat_sine.ini", {"grid.n=37 29 33"});
  const io::RunConfig config = io::read_run_config(d);
  const app::ProblemSetup<T> problem = app::setup_problem<T>(d, config);
  const std::vector<T> u = random_field<T>(problem.diffusion.grid.size(), this->rng_);
  Array<T> gu = this->gpu_->allocate(u.size()), cu = this->cpu_->allocate(u.size());
  this->gpu_->upload(u.data(), gu.data(), u.size());
  this->cpu_->upload(u.data(), cu.data(), u.size());
  for (double t : {0.0, 0.05}) {
    const physics::ErrorNorms gpu = app::error_against(*problem.exact, t, *this->gpu_, gu.data());
    const physics::ErrorNorms cpu = app::error_against(*problem.exact, t, *this->cpu_, cu.data());
    const double rel = std::is_same_v<T, float> ? 1e-6 : 1e-12;
    EXPECT_NEAR(gpu.l2, cpu.l2, rel * cpu.l2) << "t = " << t;
    EXPECT_NEAR(gpu.max, cpu.max, rel * cpu.max) << "t = " << t;
  }
  EXPECT_TRUE(problem.exact->on_device()) << "sampled on the GPU";
}

// heat_variable_alpha's diffusivity formula, sampled by the run's set-up on the GPU: the
// host's values within rounding (test_grid_formulas.cpp's bound), its range exact, and no
// host copy.
TYPED_TEST(DeviceFormulaRun, DiffusivityFormulaIsSampledOnTheDevice) {
  using T = TypeParam;
  const io::Deck d = this->deck("heat_variable_alpha.ini", {"grid.n=33 17 21"});
  const io::RunConfig config = io::read_run_config(d);
  app::ProblemSetup<T> problem = app::setup_problem<T>(d, config);
  ASSERT_TRUE(problem.diffusivity);
  app::load_diffusivity(d, problem, *this->gpu_);
  ASSERT_TRUE(problem.diffusion.backend_alpha);
  EXPECT_TRUE(problem.diffusion.alpha_field.empty());
  EXPECT_TRUE(problem.diffusivity->on_device());
  const std::size_t n = problem.diffusion.grid.size();
  std::vector<T> got(n), want(n);
  this->gpu_->download(problem.diffusion.backend_alpha, got.data(), n);
  physics::sample_slab(problem.diffusivity->formula(), problem.diffusion.slab, 0.0, want.data());
  const double eps = std::is_same_v<T, float> ? 4 * 1.2e-7 : 0;
  for (std::size_t p = 0; p < n; ++p)
    ASSERT_NEAR(double(got[p]), double(want[p]), eps * (1 + std::fabs(double(want[p]))) + 1e-13) << p;
  const auto [lo, hi] = std::minmax_element(got.begin(), got.end());
  EXPECT_EQ(problem.diffusion.whole_alpha_range[0], double(*lo));
  EXPECT_EQ(problem.diffusion.whole_alpha_range[1], double(*hi));
}

// Formulas infinite at one node of heat_sine at n = 9 (h = 1/8, exact in binary) give the
// GPU run the CPU run's deck error: the key, the node, the time and the value; a diffusivity
// that is not positive is the same error too.
TYPED_TEST(DeviceFormulaRun, NonFiniteFormulasAreTheSameDeckErrorOnTheDevice) {
  const std::string spike = "1 / (abs(x - 0.5) + abs(y - 0.25) + abs(z - 0.75))";
  const std::vector<std::vector<std::string>> cases = {
      {"initial.u=" + spike},
      {"check.exact=" + spike + " + t"},
      {"material.diffusivity=formula 1 + " + spike},
      {"material.diffusivity=formula x - 0.25"},
  };
  for (std::vector<std::string> sets : cases) {
    const std::string what = sets[0];
    sets.push_back("grid.n=9");
    sets.push_back("time.dt=0.001");
    sets.push_back("time.t_end=0.002");
    const std::string on_cpu = this->failure("heat_sine.ini", sets, *this->cpu_);
    const std::string on_gpu = this->failure("heat_sine.ini", sets, *this->gpu_);
    EXPECT_FALSE(on_cpu.empty()) << what;
    EXPECT_EQ(on_gpu, on_cpu) << what;
  }
}

}  // namespace
}  // namespace adi3d::test
