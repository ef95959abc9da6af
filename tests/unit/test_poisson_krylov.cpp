// The Krylov Poisson solve (solvers/poisson_krylov.hpp) on the CPU backend: the operator it
// runs CG on is symmetric in the half-cell weights on every face mix (the premise of CG),
// its solutions equal a tightly converged ADI iteration for alpha that varies along x and
// y (a layered stack with contrast 1000 and vias, a smooth field, a random field) in fewer
// iterations, and what it does not take is refused with the reason.
#include "solvers/poisson_krylov.hpp"
#include "tests/unit/dense_reference.hpp"
#include "tests/unit/spectral_fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace adi3d::test {
namespace {

using B = BoundaryKind;

BoundarySpec faces(B x, B y, B z_lo, B z_hi) {
  BoundarySpec bc = boundary_mix(x, y, z_lo);
  bc.face[5] = z_hi;
  return bc;
}

// Sum of w a b over the grid, w the half-cell weights (1/2 per axis on a non-periodic face).
double weighted_dot(const Diffusion<double>& d, const std::vector<double>& a, const std::vector<double>& b) {
  const Grid3& g = d.grid;
  double sum = 0;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t p = g.index(i, j, k);
        sum += half_cell_weight(d, i, j, k) * a[p] * b[p];
      }
  return sum;
}

// A x = residual(x) - residual(0) on the host, x zero on the Dirichlet nodes.
std::vector<double> apply(Backend<double>& backend, const Diffusion<double>& d, const Forcing<double>& data,
                          std::vector<double> x) {
  const Grid3& g = d.grid;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const int idx[3] = {i, j, k};
        for (int a = 0; a < 3; ++a)
          if ((idx[a] == 0 && d.bc.lo(a) == B::dirichlet) || (idx[a] == g.n[a] - 1 && d.bc.hi(a) == B::dirichlet))
            x[g.index(i, j, k)] = 0;
      }
  DouglasStepper<double> stepper(backend, d, data, 1.0);
  Array<double> in = backend.allocate(g.size()), out = backend.allocate(g.size()), zero = backend.allocate(g.size()),
                base = backend.allocate(g.size());
  backend.upload(x.data(), in.data(), g.size());
  backend.fill(zero.data(), 0.0, g.size());
  stepper.residual(zero.data(), 0.0, base.data());
  stepper.residual(in.data(), 0.0, out.data());
  backend.axpy(-1.0, base.data(), out.data(), g.size());
  std::vector<double> host(g.size());
  backend.download(out.data(), host.data(), g.size());
  return host;
}

// CG's premise: <W A x, y> = <x, W A y> for x, y zero on the Dirichlet nodes, with every
// face kind (Robin's linear part included) and a random alpha field.
TEST(PoissonKrylov, OperatorIsSymmetricInTheHalfCellWeights) {
  const BoundarySpec mixes[] = {faces(B::dirichlet, B::dirichlet, B::dirichlet, B::dirichlet),
                                faces(B::neumann, B::neumann, B::dirichlet, B::neumann),
                                faces(B::periodic, B::neumann, B::robin, B::dirichlet),
                                faces(B::neumann, B::periodic, B::robin, B::robin)};
  for (const BoundarySpec& bc : mixes) {
    std::mt19937 rng(3);
    const Diffusion<double> d = make_diffusion<double>({7, 6, 8}, bc, true, rng);
    const auto backend = make_cpu_backend<double>();
    RandomPoissonData<double> data(d.grid, 4);
    data.set_robin_h(4, 2.5);
    data.set_robin_h(5, 0.8);
    const std::vector<double> x = random_field<double>(d.grid.size(), rng), y = random_field<double>(d.grid.size(), rng);
    // A x is 0 on the Dirichlet rows and ignores x there: the products need no zeroing.
    const double axy = weighted_dot(d, apply(*backend, d, data, x), y);
    const double xay = weighted_dot(d, x, apply(*backend, d, data, y));
    EXPECT_NEAR(axy, xay, 1e-12 * std::fabs(axy)) << "faces " << static_cast<int>(bc.face[0]) << static_cast<int>(bc.face[2])
                                                  << static_cast<int>(bc.face[4]) << static_cast<int>(bc.face[5]);
  }
}

// alpha that varies along x and y, which the direct solve does not take.
enum class Field { stack_with_vias, smooth, random };

std::vector<double> alpha_of(Field kind, const Grid3& g, std::mt19937& rng) {
  std::vector<double> alpha(g.size());
  std::uniform_real_distribution<double> uniform(0.1, 10.0);
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const double x = g.coord(0, i), y = g.coord(1, j), z = g.coord(2, k);
        double a = 1;
        if (kind == Field::stack_with_vias) {
          // Silicon, a bond layer 1000 times worse, a spreader; vias of silicon through the bond layer.
          const bool bond = k >= g.n[2] / 3 && k < g.n[2] / 2;
          const bool via = (i % 4 == 1) && (j % 4 == 1);
          a = bond ? (via ? 1.0 : 1e-3) : (k < g.n[2] / 3 ? 1.0 : 3.0);
        } else if (kind == Field::smooth) {
          a = 1 + 0.8 * std::sin(3 * x) * std::cos(2 * y + z);
        } else {
          a = uniform(rng);
        }
        alpha[g.index(i, j, k)] = a;
      }
  return alpha;
}

struct KrylovCase {
  const char* name;
  Field field;
  BoundarySpec bc;
  double robin_h_lo, robin_h_hi;
};

std::vector<KrylovCase> krylov_cases() {
  return {{"stack with vias, Dirichlet below, insulated sides", Field::stack_with_vias,
           faces(B::neumann, B::neumann, B::dirichlet, B::neumann), 0, 0},
          {"stack with vias, Robin above", Field::stack_with_vias, faces(B::neumann, B::neumann, B::neumann, B::robin),
           0, 5.0},
          {"smooth, periodic x, Robin below", Field::smooth, faces(B::periodic, B::dirichlet, B::robin, B::dirichlet),
           2.0, 0},
          {"random", Field::random, faces(B::dirichlet, B::neumann, B::dirichlet, B::dirichlet), 0, 0}};
}

template <class T>
struct KrylovProblem {
  Diffusion<T> d;
  RandomPoissonData<T> data;
};

template <class T>
KrylovProblem<T> krylov_problem(const KrylovCase& c, std::array<int, 3> n) {
  std::mt19937 rng(11);
  Diffusion<T> d = make_diffusion<T>(n, c.bc, false, rng);
  const std::vector<double> alpha = alpha_of(c.field, d.grid, rng);
  d.alpha_field.assign(alpha.begin(), alpha.end());
  RandomPoissonData<T> data(d.grid, 17);
  data.set_robin_h(4, c.robin_h_lo);
  data.set_robin_h(5, c.robin_h_hi);
  return {std::move(d), std::move(data)};
}

// The exact discrete solution by Gaussian elimination (tests/unit/dense_reference.hpp): A's
// columns on the unknown nodes, A e = -residual(u0) for u0 the guess with the Dirichlet data.
std::vector<double> dense_solution(Backend<double>& backend, const Diffusion<double>& d, const Forcing<double>& data) {
  const Grid3& g = d.grid;
  DouglasStepper<double> stepper(backend, d, data, 1.0);
  Array<double> u0 = backend.allocate(g.size()), r = backend.allocate(g.size());
  backend.fill(u0.data(), 0.0, g.size());
  stepper.initialize(u0.data(), 0.0);
  stepper.residual(u0.data(), 0.0, r.data());
  std::vector<double> guess(g.size()), rhs(g.size());
  backend.download(u0.data(), guess.data(), g.size());
  backend.download(r.data(), rhs.data(), g.size());
  std::vector<std::size_t> unknowns;
  for (std::size_t p = 0; p < g.size(); ++p) {
    const int idx[3] = {static_cast<int>(p % g.n[0]), static_cast<int>(p / g.n[0] % g.n[1]),
                        static_cast<int>(p / (static_cast<std::size_t>(g.n[0]) * g.n[1]))};
    bool dirichlet = false;
    for (int a = 0; a < 3; ++a)
      dirichlet = dirichlet || (idx[a] == 0 && d.bc.lo(a) == B::dirichlet) ||
                  (idx[a] == g.n[a] - 1 && d.bc.hi(a) == B::dirichlet);
    if (!dirichlet) unknowns.push_back(p);
  }
  const std::size_t m = unknowns.size();
  std::vector<std::vector<double>> matrix(m, std::vector<double>(m));
  for (std::size_t c = 0; c < m; ++c) {
    std::vector<double> unit(g.size(), 0.0);
    unit[unknowns[c]] = 1;
    const std::vector<double> column = apply(backend, d, data, unit);
    for (std::size_t r2 = 0; r2 < m; ++r2) matrix[r2][c] = column[unknowns[r2]];
  }
  std::vector<double> b(m);
  for (std::size_t q = 0; q < m; ++q) b[q] = -rhs[unknowns[q]];
  const std::vector<double> e = dense_solve(std::move(matrix), std::move(b));
  for (std::size_t q = 0; q < m; ++q) guess[unknowns[q]] += e[q];
  return guess;
}

// The exact discrete solution of each case, from random data, to 1e-11 of the residual.
TEST(PoissonKrylov, VariableAlphaGivesTheExactDiscreteSolution) {
  for (const KrylovCase& c : krylov_cases()) {
    SCOPED_TRACE(c.name);
    KrylovProblem<double> p = krylov_problem<double>(c, {8, 7, 9});
    const auto backend = make_cpu_backend<double>();
    ASSERT_EQ(krylov_obstacle(p.d, p.data), "");
    PoissonKrylov<double> krylov(*backend, p.d, p.data, {1e-11, 500, 0});
    const Solved<double> k = run<double>(*backend, p.d, [&](double* u) { return krylov.solve(u); });
    EXPECT_TRUE(k.report.converged) << k.report.relative_residual;
    EXPECT_LE(k.report.relative_residual, 1e-11);
    EXPECT_STREQ(k.report.method, "krylov");
    const std::vector<double> exact = dense_solution(*backend, p.d, p.data);
    EXPECT_LE(max_difference(k.u, exact), 1e-7 * max_abs(exact)) << k.report.iterations << " iterations";
  }
}

// Where the ADI iteration converges, the same solution in fewer iterations (on the stacks
// with vias, with their contrast of 1000 inside a plane, the iteration stagnates far off).
TEST(PoissonKrylov, FewerIterationsThanTheAdiIteration) {
  for (const KrylovCase& c : krylov_cases()) {
    SCOPED_TRACE(c.name);
    KrylovProblem<double> p = krylov_problem<double>(c, {17, 16, 20});
    const auto backend = make_cpu_backend<double>();
    PoissonKrylov<double> krylov(*backend, p.d, p.data, {1e-10, 500, 0});
    const Solved<double> k = run<double>(*backend, p.d, [&](double* u) { return krylov.solve(u); });
    EXPECT_TRUE(k.report.converged) << k.report.relative_residual;
    const Solved<double> a = adi_solution(*backend, p.d, p.data, 1e-10);
    std::printf("[          ] %s: krylov %ld iterations (residual %.1e), adi %ld (%.1e)\n", c.name,
                k.report.iterations, k.report.relative_residual, a.report.iterations, a.report.relative_residual);
    if (!a.report.converged) continue;
    EXPECT_LT(k.report.iterations, a.report.iterations);
    EXPECT_LE(max_difference(k.u, a.u), 1e-6 * max_abs(a.u));
  }
}

// In float the same solve reaches float's default tolerance of the problem.
TEST(PoissonKrylov, FloatReachesItsTolerance) {
  std::mt19937 rng(5);
  Diffusion<float> d = make_diffusion<float>({12, 12, 14}, faces(B::neumann, B::neumann, B::dirichlet, B::neumann),
                                             false, rng);
  const std::vector<double> alpha = alpha_of(Field::stack_with_vias, d.grid, rng);
  d.alpha_field.assign(alpha.begin(), alpha.end());
  const auto backend = make_cpu_backend<float>();
  RandomPoissonData<float> data(d.grid, 3);
  PoissonKrylov<float> krylov(*backend, d, data, {1e-4, 500, 0});
  const Solved<float> k = run<float>(*backend, d, [&](float* u) { return krylov.solve(u); });
  EXPECT_TRUE(k.report.converged) << k.report.relative_residual << " after " << k.report.iterations;
}

TEST(PoissonKrylov, RefusesWhatItDoesNotTakeWithTheReason) {
  std::mt19937 rng(1);
  const auto backend = make_cpu_backend<double>();
  const Diffusion<double> insulated = make_diffusion<double>({5, 5, 5}, faces(B::neumann, B::neumann, B::neumann, B::neumann), true, rng);
  RandomPoissonData<double> data(insulated.grid, 2);
  EXPECT_NE(krylov_obstacle(insulated, data).find("singular"), std::string::npos);
  EXPECT_THROW(PoissonKrylov<double>(*backend, insulated, data, {}), std::invalid_argument);
  BoundarySpec robin_x = faces(B::robin, B::neumann, B::dirichlet, B::dirichlet);
  const Diffusion<double> side = make_diffusion<double>({5, 5, 5}, robin_x, true, rng);
  data.set_robin_h(0, 1.0);
  EXPECT_NE(krylov_obstacle(side, data).find("preconditioner"), std::string::npos) << krylov_obstacle(side, data);
}

}  // namespace
}  // namespace adi3d::test
