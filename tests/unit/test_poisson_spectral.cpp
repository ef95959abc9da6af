// The direct Poisson solve (solvers/poisson_spectral.hpp) on the CPU backend: on every mix
// of face kinds it takes (x and y each Dirichlet, Neumann or periodic; z any of those or
// mixed), with random sources and face data and anisotropic alpha, its solution has the
// 7-point operator's residual at rounding level and equals a tightly converged ADI
// iteration; singular problems get the compatibility shift and zero mean; problems that do
// not separate are refused.
#include "solvers/poisson_spectral.hpp"
#include "tests/unit/spectral_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

namespace adi3d::test {
namespace {

using B = BoundaryKind;

struct SpectralMixCase {
  B x, y, z_lo, z_hi;
};

std::string kind_letter(B k) { return k == B::dirichlet ? "D" : k == B::neumann ? "N" : "P"; }

std::string case_name(const ::testing::TestParamInfo<SpectralMixCase>& info) {
  const SpectralMixCase& c = info.param;
  return "x" + kind_letter(c.x) + "_y" + kind_letter(c.y) + "_z" + kind_letter(c.z_lo) + kind_letter(c.z_hi);
}

void PrintTo(const SpectralMixCase& c, std::ostream* os) {
  *os << "x " << kind_letter(c.x) << ", y " << kind_letter(c.y) << ", z " << kind_letter(c.z_lo)
      << kind_letter(c.z_hi);
}

BoundarySpec spec_of(const SpectralMixCase& c) {
  BoundarySpec bc = boundary_mix(c.x, c.y, c.z_lo);
  bc.face[5] = c.z_hi;
  return bc;
}

// Odd and even sizes, the smallest (3 and 4 nodes) among them.
const std::array<int, 3> kSizes[] = {{7, 6, 5}, {3, 4, 3}, {4, 3, 4}, {12, 9, 10}};

// The direct solve of one face mix and size in T, from random data (nearly compatible where
// singular: a shift of 1% of the data's scale left for the solver to remove).
template <class T>
Solved<T> spectral_solution(const Diffusion<T>& d, Backend<T>& backend, RandomPoissonData<T>& data, double tol) {
  if (!d.bc.has_dirichlet()) make_nearly_compatible<T>(backend, d, data, 0.01);
  PoissonSpectral<T> spectral(backend, d, data, {tol, 1, 0});
  return run<T>(backend, d, [&](T* u) { return spectral.solve(u); });
}

class SpectralMix : public ::testing::TestWithParam<SpectralMixCase> {};

// Double: the residual at rounding, the ADI iteration's solution, the same shift, zero
// mean; float: its residual at float's rounding, and the double solution within float's
// reach. Anisotropic alpha (make_diffusion: 0.7, 1.3, 0.4) and unequal spacings.
TEST_P(SpectralMix, MatchesTheOperatorAndAdi) {
  const SpectralMixCase c = GetParam();
  for (const auto& n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n " << n[0] << " " << n[1] << " " << n[2]);
    std::mt19937 rng(7), rng_f(7);
    const Diffusion<double> d = make_diffusion<double>(n, spec_of(c), false, rng);
    const auto backend = make_cpu_backend<double>();
    RandomPoissonData<double> data(d.grid, 11);
    const Solved<double> s = spectral_solution<double>(d, *backend, data, 1e-12);
    EXPECT_STREQ(s.report.method, "spectral");
    EXPECT_EQ(s.report.iterations, 1);
    EXPECT_LT(s.report.relative_residual, 1e-12);
    EXPECT_TRUE(s.report.converged);
    const Solved<double> a = adi_solution(*backend, d, data, 1e-12, 5000);
    ASSERT_TRUE(a.report.converged || a.report.stagnated) << a.report.relative_residual;
    const double diff = max_difference(s.u, a.u);
    EXPECT_LE(diff, 1e-8 * max_abs(a.u)) << "adi iterations " << a.report.iterations << ", residual "
                                         << a.report.relative_residual;
    EXPECT_EQ(s.report.source_shift, a.report.source_shift);
    if (!d.bc.has_dirichlet()) {
      EXPECT_NE(s.report.source_shift, 0.0);
      double mean = 0;
      for (double v : s.u) mean += v;
      EXPECT_LE(std::fabs(mean / static_cast<double>(s.u.size())), 1e-13 * max_abs(s.u));
    }

    const Diffusion<float> df = make_diffusion<float>(n, spec_of(c), false, rng_f);
    const auto bf = make_cpu_backend<float>();
    RandomPoissonData<float> data_f(df.grid, 11);
    const Solved<float> f = spectral_solution<float>(df, *bf, data_f, 1e-5);
    EXPECT_LT(f.report.relative_residual, 1e-5);
    double diff_f = 0;
    for (std::size_t p = 0; p < s.u.size(); ++p) diff_f = std::max(diff_f, std::fabs(s.u[p] - f.u[p]));
    EXPECT_LE(diff_f, 1e-4 * max_abs(s.u));
  }
}

std::vector<SpectralMixCase> all_mixes() {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  std::vector<SpectralMixCase> cases;
  for (B x : kinds)
    for (B y : kinds) {
      for (B z : kinds) cases.push_back({x, y, z, z});
      cases.push_back({x, y, B::dirichlet, B::neumann});
      cases.push_back({x, y, B::neumann, B::dirichlet});
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryFaceMix, SpectralMix, ::testing::ValuesIn(all_mixes()), case_name);

// alpha of z alone (layers, a chip stack; contrast up to 1000): each plane's x and y rows
// are its alpha's (the harmonic mean of equal values is the value), so the direct solve
// takes it, with the operator's harmonic means between planes, and equals the ADI iteration.
TEST(PoissonSpectral, LayeredAlphaMatchesAdi) {
  const SpectralMixCase mixes[] = {{B::neumann, B::neumann, B::dirichlet, B::dirichlet},
                                   {B::dirichlet, B::periodic, B::neumann, B::dirichlet},
                                   {B::periodic, B::neumann, B::periodic, B::periodic},
                                   {B::neumann, B::neumann, B::neumann, B::neumann}};
  for (const SpectralMixCase& c : mixes) {
    SCOPED_TRACE(::testing::Message() << case_name({c, 0}));
    std::mt19937 rng(5);
    Diffusion<double> d = make_diffusion<double>({9, 8, 12}, spec_of(c), false, rng);
    const std::vector<double> layer = random_field<double>(static_cast<std::size_t>(d.grid.n[2]), rng, 0.1, 100.0);
    d.alpha_field.resize(d.grid.size());
    const std::size_t plane = static_cast<std::size_t>(d.grid.n[0]) * d.grid.n[1];
    for (std::size_t p = 0; p < d.grid.size(); ++p) d.alpha_field[p] = layer[p / plane];
    const auto backend = make_cpu_backend<double>();
    RandomPoissonData<double> data(d.grid, 13);
    ASSERT_TRUE(spectral_obstacle(d, data, *backend).none());
    const Solved<double> s = spectral_solution<double>(d, *backend, data, 1e-12);
    EXPECT_LT(s.report.relative_residual, 1e-12);
    const Solved<double> a = adi_solution(*backend, d, data, 1e-12);
    const double diff = max_difference(s.u, a.u);
    EXPECT_LE(diff, 1e-8 * max_abs(a.u)) << "adi: " << a.report.iterations << " iterations, residual "
                                         << a.report.relative_residual;
    // One node off its layer's value: not separable, refused.
    d.alpha_field[d.grid.index(3, 2, 5)] *= 1.5;
    EXPECT_FALSE(spectral_obstacle(d, data, *backend).none());
    EXPECT_THROW(PoissonSpectral<double>(*backend, d, data, {}), std::invalid_argument);
  }
}

// Robin z faces with one h each: only the z systems' end rows change (their beta), so the
// direct solve takes them and equals the ADI iteration; h = 0 leaves an insulated face (a
// singular problem with nothing else anchoring it). A Robin face on x or y does not separate.
TEST(PoissonSpectral, RobinZFacesMatchAdi) {
  struct RobinCase {
    SpectralMixCase faces;
    double h_lo, h_hi;
  };
  const RobinCase cases[] = {{{B::dirichlet, B::dirichlet, B::robin, B::robin}, 2.5, 0.7},
                             {{B::neumann, B::neumann, B::robin, B::neumann}, 1.5, 0},
                             {{B::periodic, B::neumann, B::neumann, B::robin}, 0, 4.0},
                             {{B::neumann, B::periodic, B::robin, B::dirichlet}, 0.3, 0},
                             {{B::neumann, B::neumann, B::robin, B::robin}, 0, 0}};
  for (const RobinCase& c : cases) {
    for (const auto& n : kSizes) {
      SCOPED_TRACE(::testing::Message() << case_name({c.faces, 0}) << " h " << c.h_lo << " " << c.h_hi << " n "
                                        << n[0] << " " << n[1] << " " << n[2]);
      std::mt19937 rng(9);
      const Diffusion<double> d = make_diffusion<double>(n, spec_of(c.faces), false, rng);
      const auto backend = make_cpu_backend<double>();
      RandomPoissonData<double> data(d.grid, 21);
      if (c.faces.z_lo == B::robin) data.set_robin_h(4, c.h_lo);
      if (c.faces.z_hi == B::robin) data.set_robin_h(5, c.h_hi);
      ASSERT_TRUE(spectral_obstacle(d, data, *backend).none());
      const bool anchored = d.bc.has_dirichlet() || c.h_lo > 0 || c.h_hi > 0;
      if (!anchored) make_nearly_compatible<double>(*backend, d, data, 0.01);
      PoissonSpectral<double> spectral(*backend, d, data, {1e-12, 1, 0});
      const Solved<double> s = run<double>(*backend, d, [&](double* u) { return spectral.solve(u); });
      EXPECT_LT(s.report.relative_residual, 1e-12);
      const Solved<double> a = adi_solution(*backend, d, data, 1e-12);
      const double diff = max_difference(s.u, a.u);
      EXPECT_LE(diff, 1e-8 * max_abs(a.u)) << "adi: " << a.report.iterations << " iterations, residual "
                                           << a.report.relative_residual;
      EXPECT_EQ(s.report.source_shift, a.report.source_shift);
    }
  }
}

// Solving twice with the same solver object (plans reused) gives the same bits.
TEST(PoissonSpectral, ReusesItsPlans) {
  std::mt19937 rng(3);
  const Diffusion<double> d = make_diffusion<double>({9, 8, 7}, boundary_mix(B::periodic, B::dirichlet, B::neumann),
                                                     false, rng);
  const auto backend = make_cpu_backend<double>();
  RandomPoissonData<double> data(d.grid, 5);
  PoissonSpectral<double> spectral(*backend, d, data, {1e-12, 1, 0});
  const Solved<double> a = run<double>(*backend, d, [&](double* u) { return spectral.solve(u); });
  const Solved<double> b = run<double>(*backend, d, [&](double* u) { return spectral.solve(u); });
  EXPECT_EQ(a.u, b.u);
}

// A gross incompatibility is the same error as the iteration's.
TEST(PoissonSpectral, IncompatibleDataIsRefused) {
  std::mt19937 rng(3);
  const Diffusion<double> d = make_diffusion<double>({6, 7, 5}, boundary_mix(B::neumann, B::periodic, B::neumann),
                                                     false, rng);
  const auto backend = make_cpu_backend<double>();
  RandomPoissonData<double> data(d.grid, 5);
  data.set_offset(-3);  // a mean of 3 against data of magnitude about 1
  PoissonSpectral<double> spectral(*backend, d, data, {1e-12, 1, 0});
  Array<double> u = backend->allocate(d.grid.size());
  backend->fill(u.data(), 0.0, d.grid.size());
  EXPECT_THROW(spectral.solve(u.data()), IncompatibleData);
}

// Alpha fields, Robin faces and unlike faces on x or y do not separate: refused, saying why.
TEST(PoissonSpectral, RefusesWhatDoesNotSeparate) {
  std::mt19937 rng(3);
  const auto backend = make_cpu_backend<double>();
  const Diffusion<double> field = make_diffusion<double>({5, 5, 5}, boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet),
                                                         true, rng);
  EXPECT_NE(spectral_obstacle(field, ZeroForcing<double>(), *backend).why.find("varies along x or y"), std::string::npos);
  BoundarySpec mixed_x = boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet);
  mixed_x.face[1] = B::neumann;
  const Diffusion<double> unlike = make_diffusion<double>({5, 5, 5}, mixed_x, false, rng);
  const SpectralObstacle o = spectral_obstacle(unlike, ZeroForcing<double>(), *backend);
  EXPECT_EQ(o.face, 1);
  EXPECT_NE(o.why.find("x- and x+ faces differ"), std::string::npos);
  BoundarySpec robin = boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet);
  robin.face[2] = B::robin;
  EXPECT_EQ(spectral_obstacle(robin, false).face, 2);  // on y: no
  robin.face[2] = B::dirichlet;
  robin.face[4] = B::robin;
  EXPECT_TRUE(spectral_obstacle(robin, false).none());  // on z, one h over the face: yes
  EXPECT_EQ(spectral_obstacle(robin, false, {true, false}).face, 4);  // an h that varies: no
  ZeroForcing<double> none;
  EXPECT_THROW(PoissonSpectral<double>(*backend, unlike, none, {}), std::invalid_argument);
  EXPECT_TRUE(spectral_obstacle(boundary_mix(B::periodic, B::neumann, B::dirichlet), false).none());
}

}  // namespace
}  // namespace adi3d::test
