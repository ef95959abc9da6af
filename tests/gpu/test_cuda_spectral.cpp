// The CUDA direct Poisson solve (solvers/cuda/spectral/) against the CPU's (itself equal to
// the ADI iteration to rounding: tests/unit/test_poisson_spectral.cpp), in float and
// double, on every face mix it takes, odd, even and the smallest sizes and a few larger
// ones, and alpha of z alone: the residual of the 7-point operator at rounding level, the
// CPU solution within
// rounding, the same compatibility shift and zero mean where singular, and a second solve
// with the same plans giving the same result.
#include "solvers/poisson_krylov.hpp"
#include "solvers/poisson_spectral.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/unit/spectral_fixtures.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace adi3d::test {
namespace {

using B = BoundaryKind;

template <class T>
double residual_limit() {
  return std::is_same<T, float>::value ? 1e-5 : 1e-12;
}
// The GPU's solution against the CPU's double one, relative to the largest entry, at the
// least: transforms of different lengths and orders (cuFFT's of the extension, FFTW's real
// ones) round differently.
template <class T>
double solution_limit() {
  return std::is_same<T, float>::value ? 2e-4 : 1e-10;
}

template <class T>
struct Solution {
  PoissonReport report;
  std::vector<T> u;
};

template <class T>
Solution<T> solve_on(Backend<T>& backend, const Diffusion<T>& d, const Forcing<T>& data, int solves = 1) {
  PoissonSpectral<T> solver(backend, d, data, {std::is_same<T, float>::value ? 1e-5 : 1e-12, 1, 0});
  Array<T> u = backend.allocate(d.grid.size());
  Solution<T> s;
  for (int r = 0; r < solves; ++r) {
    backend.fill(u.data(), T(0), d.grid.size());
    s.report = solver.solve(u.data());
  }
  backend.synchronize();
  s.u.resize(d.grid.size());
  backend.download(u.data(), s.u.data(), d.grid.size());
  return s;
}

// A face mix's problem in precision U: anisotropic alpha, or with `layered` alpha of z alone
// (contrast up to 1000), the same for every U (one seed).
template <class U>
Diffusion<U> spectral_problem(BoundarySpec bc, std::array<int, 3> n, bool layered) {
  std::mt19937 rng(7);
  Diffusion<U> d = make_diffusion<U>(n, bc, false, rng);
  if (layered) {
    const std::vector<double> layer = random_field<double>(static_cast<std::size_t>(n[2]), rng, 0.1, 100.0);
    const std::size_t plane = static_cast<std::size_t>(n[0]) * n[1];
    d.alpha_field.resize(d.grid.size());
    for (std::size_t p = 0; p < d.grid.size(); ++p) d.alpha_field[p] = static_cast<U>(layer[p / plane]);
  }
  return d;
}

// The problem's random data, with one h over each Robin z face, nearly compatible where
// nothing anchors the solution.
template <class U>
RandomPoissonData<U> spectral_data(Backend<U>& cpu, const Diffusion<U>& d, std::array<double, 2> robin_h) {
  RandomPoissonData<U> data(d.grid, 11);
  for (int side = 0; side < 2; ++side)
    if (d.bc.face[4 + side] == BoundaryKind::robin) data.set_robin_h(4 + side, robin_h[side]);
  if (!d.bc.has_dirichlet() && robin_h[0] == 0 && robin_h[1] == 0) make_nearly_compatible<U>(cpu, d, data, 0.01);
  return data;
}

template <class U>
Solution<U> cpu_solution(BoundarySpec bc, std::array<int, 3> n, bool layered, std::array<double, 2> robin_h) {
  const Diffusion<U> d = spectral_problem<U>(bc, n, layered);
  const auto cpu = make_cpu_backend<U>();
  const RandomPoissonData<U> data = spectral_data<U>(*cpu, d, robin_h);
  return solve_on<U>(*cpu, d, data);
}

BoundarySpec mix(B x, B y, B z_lo, B z_hi) {
  BoundarySpec bc = boundary_mix(x, y, z_lo);
  bc.face[5] = z_hi;
  return bc;
}

template <class T>
class CudaSpectral : public CudaTest<T> {
 protected:
  // One face mix and size, from the same random data (nearly compatible where singular):
  // the GPU's solution against the CPU's double one, within what the CPU's own solve in T
  // reaches (float's rounding grows with the grid's condition) and its residual likewise.
  void check(BoundarySpec bc, std::array<int, 3> n, bool layered = false, std::array<double, 2> robin_h = {0, 0}) {
    SCOPED_TRACE(::testing::Message() << "faces " << static_cast<int>(bc.face[0]) << static_cast<int>(bc.face[2])
                                      << static_cast<int>(bc.face[4]) << static_cast<int>(bc.face[5]) << " n "
                                      << n[0] << " " << n[1] << " " << n[2] << (layered ? " layered" : ""));
    const Diffusion<T> d = spectral_problem<T>(bc, n, layered);
    const RandomPoissonData<T> data = spectral_data<T>(*this->cpu_, d, robin_h);
    const Solution<double> reference = cpu_solution<double>(bc, n, layered, robin_h);
    const Solution<T> cpu = solve_on<T>(*this->cpu_, d, data);
    const Solution<T> gpu = solve_on<T>(*this->gpu_, d, data, 2);
    EXPECT_STREQ(gpu.report.method, "spectral");
    EXPECT_LT(gpu.report.relative_residual, std::max(residual_limit<T>(), 10 * cpu.report.relative_residual))
        << "cpu's " << cpu.report.relative_residual;
    double largest = 0, gpu_error = 0, cpu_error = 0, mean = 0;
    for (std::size_t p = 0; p < reference.u.size(); ++p) {
      largest = std::max(largest, std::fabs(reference.u[p]));
      gpu_error = std::max(gpu_error, std::fabs(static_cast<double>(gpu.u[p]) - reference.u[p]));
      cpu_error = std::max(cpu_error, std::fabs(static_cast<double>(cpu.u[p]) - reference.u[p]));
      mean += gpu.u[p];
    }
    EXPECT_LE(gpu_error, std::max(solution_limit<T>() * largest, 10 * cpu_error)) << "cpu's " << cpu_error;
    const double shift_limit = std::is_same<T, float>::value ? 1e-6 : 1e-12;  // data of magnitude about 1
    EXPECT_LE(std::fabs(gpu.report.source_shift - cpu.report.source_shift), shift_limit);
    if (!bc.has_dirichlet() && robin_h[0] == 0 && robin_h[1] == 0) {
      EXPECT_LE(std::fabs(mean / static_cast<double>(reference.u.size())), 10 * solution_limit<T>() * largest);
    }
  }

  // The Krylov solve on both backends (KrylovMatchesTheCpu): alpha 1 or 100 by layers, times
  // a random or a smooth part along x and y.
  void check_krylov(bool smooth) {
    std::mt19937 rng(7);
    Diffusion<T> d = make_diffusion<T>({33, 30, 21}, mix(B::neumann, B::neumann, B::dirichlet, B::robin), true, rng);
    const Grid3& g = d.grid;
    for (std::size_t p = 0; p < g.size(); ++p) {
      const int i = static_cast<int>(p % g.n[0]), j = static_cast<int>(p / g.n[0] % g.n[1]);
      const std::size_t k = p / (static_cast<std::size_t>(g.n[0]) * g.n[1]);
      if (smooth) d.alpha_field[p] = static_cast<T>(1.5 + std::sin(g.coord(0, i) * 3) * std::cos(g.coord(1, j) * 2));
      d.alpha_field[p] *= static_cast<T>(k < 10 ? 1 : 100);
    }
    EXPECT_EQ(krylov_scales(d, *this->gpu_), smooth);
    RandomPoissonData<T> data(d.grid, 9);
    data.set_robin_h(5, 3.0);
    // Float: its default for this field (default_tolerance), which it reaches.
    const double tol = std::is_same<T, float>::value ? default_tolerance(d, robin_h_ranges(d.bc, data)) : 1e-11;
    std::vector<T> u[2];
    Backend<T>* backends[2] = {this->cpu_.get(), this->gpu_.get()};
    for (int b = 0; b < 2; ++b) {
      // (The stepper uploads the host alpha field to its backend.)
      PoissonKrylov<T> krylov(*backends[b], d, data, {tol, 500, 0});
      const Solved<T> s = run<T>(*backends[b], d, [&](T* x) { return krylov.solve(x); });
      EXPECT_TRUE(s.report.converged) << (b ? "gpu " : "cpu ") << s.report.relative_residual << " after "
                                      << s.report.iterations;
      u[b] = s.u;
    }
    double largest = 0, diff = 0;
    for (std::size_t p = 0; p < u[0].size(); ++p) {
      largest = std::max(largest, std::fabs(static_cast<double>(u[0][p])));
      diff = std::max(diff, std::fabs(static_cast<double>(u[0][p]) - static_cast<double>(u[1][p])));
    }
    EXPECT_LE(diff, (std::is_same<T, float>::value ? 1e-3 : 1e-8) * largest);
  }
};
TYPED_TEST_SUITE(CudaSpectral, Precisions);

// Every face mix, at odd, even and the smallest sizes.
TYPED_TEST(CudaSpectral, EveryFaceMixMatchesTheCpu) {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  const std::array<int, 3> sizes[] = {{7, 6, 5}, {3, 4, 3}, {4, 3, 4}, {12, 9, 10}};
  for (const auto& n : sizes)
    for (B x : kinds)
      for (B y : kinds) {
        for (B z : kinds) this->check(mix(x, y, z, z), n);
        this->check(mix(x, y, B::dirichlet, B::neumann), n);
        this->check(mix(x, y, B::neumann, B::dirichlet), n);
      }
}

// Sizes past a block of threads and the transforms' easy lengths (primes, odd periods).
TYPED_TEST(CudaSpectral, LargerGridsMatchTheCpu) {
  this->check(mix(B::dirichlet, B::dirichlet, B::dirichlet, B::dirichlet), {65, 65, 65});
  this->check(mix(B::periodic, B::neumann, B::periodic, B::periodic), {67, 41, 37});
  this->check(mix(B::neumann, B::periodic, B::neumann, B::neumann), {131, 29, 53});
  this->check(mix(B::dirichlet, B::periodic, B::neumann, B::dirichlet), {97, 130, 33});
  // The line transforms: lines of odd and even FFT lengths longer than a warp's 32 values
  // per lane chunk, and line counts that leave a block's lines part used.
  this->check(mix(B::neumann, B::dirichlet, B::dirichlet, B::neumann), {300, 7, 6});
  this->check(mix(B::dirichlet, B::neumann, B::periodic, B::periodic), {9, 258, 5});
}

// alpha of z alone (layers): each plane's x and y eigenvalues scaled by its alpha.
TYPED_TEST(CudaSpectral, LayeredAlphaMatchesTheCpu) {
  this->check(mix(B::neumann, B::neumann, B::dirichlet, B::dirichlet), {9, 8, 12}, true);
  this->check(mix(B::dirichlet, B::periodic, B::neumann, B::dirichlet), {33, 20, 17}, true);
  this->check(mix(B::periodic, B::neumann, B::periodic, B::periodic), {16, 15, 14}, true);
  this->check(mix(B::neumann, B::neumann, B::neumann, B::neumann), {40, 41, 9}, true);
}

// Robin z faces with one h each (h = 0: an insulated face, the problem singular).
TYPED_TEST(CudaSpectral, RobinZFacesMatchTheCpu) {
  this->check(mix(B::dirichlet, B::dirichlet, B::robin, B::robin), {17, 16, 15}, false, {2.5, 0.7});
  this->check(mix(B::neumann, B::periodic, B::robin, B::dirichlet), {20, 24, 13}, true, {1.5, 0});
  this->check(mix(B::periodic, B::neumann, B::neumann, B::robin), {16, 11, 9}, false, {0, 4.0});
  this->check(mix(B::neumann, B::neumann, B::robin, B::robin), {9, 10, 11}, false, {0, 0});
}

// The Krylov solve (poisson_krylov.hpp) on the GPU: layered fields (a factor 100 between
// layers) with a part along x and y, its preconditioner the GPU's direct solve of the plane
// means, to the CPU's solution. A random part jumps too much for the scaled preconditioning
// (krylov_scales), a smooth one takes it.
TYPED_TEST(CudaSpectral, KrylovMatchesTheCpu) {
  for (const bool smooth : {false, true}) {
    SCOPED_TRACE(smooth ? "smooth in planes" : "random in planes");
    this->check_krylov(smooth);
  }
}


// The case: a 129^3 Dirichlet box in double is solved to a relative residual near
// 1e-13, whatever the backend.
TEST(CudaSpectralSolve, DirichletBoxResidual) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda_device_summary();
  const auto gpu = make_cuda_backend<double>(0);
  std::mt19937 rng(1);
  const Diffusion<double> d = make_diffusion<double>({129, 129, 129}, boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet),
                                                     false, rng);
  RandomPoissonData<double> data(d.grid, 3);
  const Solution<double> s = solve_on<double>(*gpu, d, data);
  EXPECT_LT(s.report.relative_residual, 1e-12);
  EXPECT_TRUE(s.report.converged);
}

}  // namespace
}  // namespace adi3d::test
