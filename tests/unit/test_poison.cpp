// The ADI3D_POISON test switch (solvers/poison.hpp). The suites run again under it as the
// poison_nan_* and poison_big_* ctests; these tests check that the switch fills what it
// promises (so that those runs test something), and that a mistyped value stops a run.
#include "solvers/cpu/cpu_backend.hpp"
#include "solvers/poison.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>

namespace adi3d {
namespace {

template <class T>
void expect_pattern(const T* values, std::size_t n, const char* what) {
  const Poison setting = poison_setting();
  const auto* bytes = reinterpret_cast<const unsigned char*>(values);
  for (std::size_t b = 0; b < n * sizeof(T); ++b)
    ASSERT_EQ(bytes[b], poison_byte(setting)) << what << ": byte " << b;
  for (std::size_t i = 0; i < n; ++i) {
    if (setting == Poison::nan) {
      ASSERT_TRUE(std::isnan(values[i])) << what << "[" << i << "]";
    } else {
      // Finite, and large enough that the product of two overflows.
      ASSERT_TRUE(std::isfinite(values[i])) << what << "[" << i << "]";
      ASSERT_TRUE(std::isinf(values[i] * values[i])) << what << "[" << i << "]";
    }
  }
}

template <class T>
class PoisonSwitch : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoisonSwitch, Precisions);

TYPED_TEST(PoisonSwitch, CpuArraysStagingAndScratchCarryThePattern) {
  using T = TypeParam;
  if (poison_setting() == Poison::off) GTEST_SKIP() << "ADI3D_POISON is not set (the poison_* ctests set it)";
  cpu::CpuBackend<T> backend;
  const std::size_t n = 1001;
  Array<T> array = backend.allocate(n);
  expect_pattern(array.data(), n, "CpuBackend::allocate");
  Array<T> staging = backend.allocate_host_staging(n);
  expect_pattern(staging.data(), n, "allocate_host_staging");
  const std::vector<T> scratch = scratch_vector<T>(n);
  expect_pattern(scratch.data(), n, "scratch_vector");
}

TEST(PoisonSwitchValue, AMistypedValueStopsTheRunAndNamesTheVariable) {
  const std::string err = ::testing::TempDir() + "adi3d_poison_err";
  const std::string cmd = std::string("ADI3D_POISON=nans ") + ADI3D_EXE + " run " + ADI3D_SOURCE_DIR +
                          "/inputs/heat_sine.ini --quiet --set grid.n=5 --set output.dir=" + ::testing::TempDir() +
                          "adi3d_poison_out >/dev/null 2>" + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::FILE* f = std::fopen(err.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  EXPECT_NE(text.find("ADI3D_POISON='nans'"), std::string::npos) << text;
  EXPECT_NE(text.find("expected nan, big or nothing"), std::string::npos) << text;
}

}  // namespace
}  // namespace adi3d
