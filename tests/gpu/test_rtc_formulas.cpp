// Formulas compiled for the GPU at run time (NVRTC) agree with the host's muparser on grid
// and face nodes, FormulaForcing uses them on a CUDA backend, and their code is cached.
#include "physics/formula.hpp"
#include "physics/formula_forcing.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/rtc/device_function.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/unit/scoped_env.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

namespace adi3d::test {
namespace {

template <class T>
class RtcFormula : public CudaTest<T> {};
TYPED_TEST_SUITE(RtcFormula, Precisions);

const char* kFormulas[] = {"sin(pi*x) * cos(2*pi*y) * exp(-t) + z^2",
                           "x < 0.5 ? 1 + y : 100 * z",
                           "-2^2 + abs(x - y) + sign(z - 0.3) + rint(3*x) + min(x, y, z) + avg(x, t)",
                           "2*cos(x + 2*y - z + 2*t) + 4.8*sin(x + 2*y - z + 2*t)"};

TYPED_TEST(RtcFormula, GridAndFaceSamplesMatchTheHost) {
  using T = TypeParam;
  Grid3 g;
  g.n = {37, 11, 9};
  g.lo = {-0.25, 0.5, 0.0};
  g.h = {1.0 / 36, 0.1, 0.125};
  for (const char* text : kFormulas) {
    const physics::Formula f(text);
    rtc::DeviceFunction<T> fn(f.device_expression(), 0);
    std::vector<T> host(g.size());
    physics::sample_grid(f, g, 0.7, host.data());
    Array<T> dev = this->gpu_->allocate(g.size());
    fn.sample_grid(g, 0.7, dev.data(), this->gpu_->cuda_stream());
    const std::vector<T> got = this->from_gpu(dev);
    for (std::size_t p = 0; p < host.size(); ++p)
      ASSERT_NEAR(double(got[p]), double(host[p]), tolerance<T>() * (1 + std::fabs(double(host[p]))))
          << text << " at " << p;
    for (int face = 0; face < 6; ++face) {
      std::vector<T> hf(face_size(g, face));
      physics::sample_face(f, g, face, 0.3, hf.data());
      Array<T> df = this->gpu_->allocate(hf.size());
      fn.sample_face(g, face, 0.3, df.data(), this->gpu_->cuda_stream());
      const std::vector<T> gf = this->from_gpu(df);
      for (std::size_t p = 0; p < hf.size(); ++p)
        ASSERT_NEAR(double(gf[p]), double(hf[p]), tolerance<T>() * (1 + std::fabs(double(hf[p]))))
            << text << " face " << face << " at " << p;
    }
  }
}

TYPED_TEST(RtcFormula, ForcingEvaluatesSourceAndNeumannDataOnTheDevice) {
  using T = TypeParam;
  Grid3 g;
  g.n = {16, 12, 10};
  g.h = {0.1, 0.1, 0.1};
  std::array<std::optional<physics::Formula>, 6> faces;
  faces[1] = physics::Formula("y * t");
  physics::FormulaForcing<T> forcing(g, physics::Formula("x + 2*y + 3*z*t"), std::move(faces));
  Array<T> dev = this->gpu_->allocate(g.size());
  ASSERT_TRUE(forcing.source_on_backend(2.0, dev.data(), *this->gpu_));
  const std::vector<T> got = this->from_gpu(dev);
  EXPECT_NEAR(double(got[g.index(3, 4, 5)]), 0.3 + 0.8 + 3.0, 1e-5);
  Array<T> face = this->gpu_->allocate(face_size(g, 1));
  ASSERT_TRUE(forcing.boundary_on_backend(1, 2.0, face.data(), *this->gpu_));
  EXPECT_NEAR(double(this->from_gpu(face)[2]), 0.2 * 2.0, 1e-6);
  EXPECT_FALSE(forcing.boundary_on_backend(0, 2.0, face.data(), *this->gpu_)) << "no formula on x-";
}

// The sampling kernels record the first non-finite value as they write (issue 39): its
// index, time and value, kept over later samplings; FormulaForcing turns it into the key
// and node of the deck error.
TYPED_TEST(RtcFormula, SamplingRecordsTheFirstNonFiniteValue) {
  using T = TypeParam;
  Grid3 g;
  g.n = {9, 7, 5};
  for (int a = 0; a < 3; ++a) g.h[a] = 1.0 / (g.n[a] - 1);
  Array<T> dev = this->gpu_->allocate(g.size());
  rtc::DeviceFunction<T> finite(physics::Formula("x + t").device_expression(), 0);
  finite.sample_grid(g, 0.7, dev.data(), this->gpu_->cuda_stream());
  EXPECT_FALSE(finite.first_non_finite());
  rtc::DeviceFunction<T> fn(physics::Formula("1/(x - 0.5) + t").device_expression(), 0);
  fn.sample_grid(g, 0.25, dev.data(), this->gpu_->cuda_stream());
  fn.sample_grid(g, 0.5, dev.data(), this->gpu_->cuda_stream());
  const auto e = fn.first_non_finite();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->index % 9, 4u) << "on the plane x = 0.5";
  EXPECT_DOUBLE_EQ(e->t, 0.25) << "the first sampling's time";
  EXPECT_TRUE(std::isinf(e->value));

  physics::Formula source("log(0.5 - t) + z");
  source.set_key("source.f");
  physics::FormulaForcing<T> forcing(g, std::move(source), {});
  ASSERT_TRUE(forcing.source_on_backend(0.25, dev.data(), *this->gpu_));
  EXPECT_FALSE(forcing.first_non_finite());
  ASSERT_TRUE(forcing.source_on_backend(0.75, dev.data(), *this->gpu_));
  const auto s = forcing.first_non_finite();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->key, "source.f");
  EXPECT_DOUBLE_EQ(s->t, 0.75);
  // NaN on every node: the kernel's threads race to record one (the first to get there,
  // not the lowest index); it must be a node of the grid.
  for (double c : {s->x, s->y, s->z}) {
    EXPECT_GE(c, 0.0);
    EXPECT_LE(c, 1.0);
  }
  EXPECT_DOUBLE_EQ(std::round(s->x / g.h[0]) * g.h[0], s->x);
  EXPECT_DOUBLE_EQ(std::round(s->z / g.h[2]) * g.h[2], s->z);
}

// A formula's code comes from NVRTC once, then from the process while a function holds it,
// else from the compile cache (a fresh directory here): the same values to the bit; a
// damaged entry is compiled anew and stored again.
TYPED_TEST(RtcFormula, CompiledCodeComesFromTheCacheTheSecondTime) {
  using T = TypeParam;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("adi3d_rtc_cache_test_" + std::to_string(sizeof(T)));
  fs::remove_all(dir);
  const ScopedEnv cache_dir("ADI3D_RTC_CACHE", dir.string().c_str());
  Grid3 g;
  g.n = {33, 7, 5};
  g.h = {0.03, 0.1, 0.2};
  const std::string expression = physics::Formula(kFormulas[0]).device_expression();
  auto sample = [&](const rtc::DeviceFunction<T>& fn) {
    Array<T> dev = this->gpu_->allocate(g.size());
    fn.sample_grid(g, 0.7, dev.data(), this->gpu_->cuda_stream());
    return this->from_gpu(dev);
  };
  auto entries = [&] {
    int count = 0;
    if (fs::exists(dir))
      for (const auto& e : fs::directory_iterator(dir)) count += e.path().extension() == ".bin";
    return count;
  };
  std::vector<T> want;
  {
    const rtc::DeviceFunction<T> first(expression, 0);
    EXPECT_FALSE(first.from_cache());
    want = sample(first);
    EXPECT_EQ(entries(), 1);
    // While a function holds its code, another of the same code takes it from the process,
    // not from the disk (emptied here) nor from NVRTC.
    fs::remove_all(dir);
    const rtc::DeviceFunction<T> twin(expression, 0);
    EXPECT_TRUE(twin.from_cache());
    EXPECT_EQ(entries(), 0);
    EXPECT_EQ(sample(twin), want);
  }
  {
    const rtc::DeviceFunction<T> compiled(expression, 0);
    EXPECT_FALSE(compiled.from_cache()) << "the process let its code go, the disk has none";
  }
  {
    const rtc::DeviceFunction<T> second(expression, 0);
    EXPECT_TRUE(second.from_cache());
    EXPECT_EQ(sample(second), want);
  }

  EXPECT_EQ(entries(), 1);
  for (const auto& e : fs::directory_iterator(dir)) {
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-8, std::ios::end);
    f.put('\x5a');  // a byte of the cubin
  }
  {
    const rtc::DeviceFunction<T> damaged(expression, 0);
    EXPECT_FALSE(damaged.from_cache());
    EXPECT_EQ(sample(damaged), want);
  }
  const rtc::DeviceFunction<T> again(expression, 0);
  EXPECT_TRUE(again.from_cache()) << "stored again";
  fs::remove_all(dir);
}

TEST(RtcFormulaErrors, CompileErrorsCarryTheLog) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  try {
    rtc::DeviceFunction<double> fn("x +* undefined_name", 0);
    FAIL() << "compiled";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace adi3d::test
