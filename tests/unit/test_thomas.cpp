// Thomas and cyclic Thomas against dense elimination on random diagonally dominant systems.
#include "dense_reference.hpp"
#include "solvers/cpu/batched_block_solve.hpp"
#include "solvers/thomas.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace adi3d {
namespace {

template <class T>
struct System {
  std::vector<T> a, b, c, d;
};

template <class T>
System<T> random_system(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> off(-1.0, 1.0), rhs(-10.0, 10.0), margin(0.1, 2.0);
  System<T> s{std::vector<T>(n), std::vector<T>(n), std::vector<T>(n), std::vector<T>(n)};
  for (int i = 0; i < n; ++i) {
    s.a[i] = static_cast<T>(off(rng));
    s.c[i] = static_cast<T>(off(rng));
    s.b[i] = static_cast<T>((std::fabs(double(s.a[i])) + std::fabs(double(s.c[i])) + margin(rng)) *
                            (i % 2 ? -1 : 1));
    s.d[i] = static_cast<T>(rhs(rng));
  }
  return s;
}

template <class T>
std::vector<double> reference(const System<T>& s, bool cyclic) {
  const int n = static_cast<int>(s.b.size());
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
  for (int i = 0; i < n; ++i) {
    m[i][i] = s.b[i];
    if (i > 0) m[i][i - 1] += s.a[i];
    if (i + 1 < n) m[i][i + 1] += s.c[i];
  }
  if (cyclic) {
    m[0][n - 1] += s.a[0];
    m[n - 1][0] += s.c[n - 1];
  }
  return test::dense_solve(m, std::vector<double>(s.d.begin(), s.d.end()));
}

template <class T>
void expect_close(const std::vector<T>& x, const std::vector<double>& ref) {
  double scale = 1;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (std::size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(double(x[i]), ref[i], test::tolerance<T>() * scale * 10) << "row " << i << " of " << ref.size();
}

template <class T>
class Thomas : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Thomas, Types);

const int kSizes[] = {1, 2, 3, 4, 5, 7, 16, 31, 33, 64, 100, 127, 257, 1000};

TYPED_TEST(Thomas, MatchesDenseEliminationOnManySizes) {
  using T = TypeParam;
  std::mt19937 rng(42);
  for (int n : kSizes) {
    for (int trial = 0; trial < 3; ++trial) {
      System<T> s = random_system<T>(n, rng);
      const std::vector<double> ref = reference(s, false);
      std::vector<T> cp(n);
      thomas_solve(n, s.a.data(), s.b.data(), s.c.data(), s.d.data(), cp.data());
      expect_close(s.d, ref);
    }
  }
}

TYPED_TEST(Thomas, StridedAccessSolvesTheSameSystem) {
  using T = TypeParam;
  std::mt19937 rng(7);
  const int n = 37, stride = 5;
  System<T> s = random_system<T>(n, rng);
  const std::vector<double> ref = reference(s, false);
  std::vector<T> a(n * stride, T(99)), b(n * stride, T(99)), c(n * stride, T(99)), d(n * stride, T(99)),
      cp(n * stride);
  for (int i = 0; i < n; ++i) {
    a[i * stride] = s.a[i];
    b[i * stride] = s.b[i];
    c[i * stride] = s.c[i];
    d[i * stride] = s.d[i];
  }
  thomas_solve(n, a.data(), b.data(), c.data(), d.data(), cp.data(), stride);
  std::vector<T> x(n);
  for (int i = 0; i < n; ++i) x[i] = d[i * stride];
  expect_close(x, ref);
  EXPECT_EQ(d[1], T(99));  // entries between rows untouched
}

TYPED_TEST(Thomas, CyclicMatchesDenseElimination) {
  using T = TypeParam;
  std::mt19937 rng(3);
  for (int n : kSizes) {
    if (n < 3) continue;
    System<T> s = random_system<T>(n, rng);
    const std::vector<double> ref = reference(s, true);
    std::vector<T> cp(n), bb(n), z(n);
    cyclic_thomas_solve(n, s.a.data(), s.b.data(), s.c.data(), s.d.data(), cp.data(), bb.data(), z.data());
    expect_close(s.d, ref);
  }
}

TYPED_TEST(Thomas, BlockSolversMatchOneSystemAtATime) {
  using T = TypeParam;
  std::mt19937 rng(11);
  for (int n : {1, 2, 3, 9, 65}) {
    for (bool cyclic : {false, true}) {
      if (cyclic && n < 3) continue;
      const int B = 7;
      std::vector<System<T>> systems;
      std::vector<T> a(n * B), b(n * B), c(n * B), d(n * B), cp(n * B), z(n * B), bb(n * B);
      for (int q = 0; q < B; ++q) {
        systems.push_back(random_system<T>(n, rng));
        for (int m = 0; m < n; ++m) {
          a[m * B + q] = systems[q].a[m];
          b[m * B + q] = systems[q].b[m];
          c[m * B + q] = systems[q].c[m];
          d[m * B + q] = systems[q].d[m];
        }
      }
      if (cyclic)
        cpu::cyclic_thomas_block(n, B, cpu::BlockScratch<T>{a.data(), b.data(), c.data(), d.data(),
                                                            cp.data(), z.data(), bb.data()});
      else
        cpu::thomas_block(n, B, a.data(), b.data(), c.data(), d.data(), cp.data());
      for (int q = 0; q < B; ++q) {
        std::vector<T> x(n);
        for (int m = 0; m < n; ++m) x[m] = d[m * B + q];
        expect_close(x, reference(systems[q], cyclic));
      }
    }
  }
}

}  // namespace
}  // namespace adi3d
