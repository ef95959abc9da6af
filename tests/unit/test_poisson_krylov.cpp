// The Krylov Poisson solve (solvers/poisson_krylov.hpp) on the CPU backend: the operator it
// runs CG on is symmetric in the half-cell weights on every face mix (the premise of CG),
// with either preconditioner its solutions are the exact discrete ones (Gaussian
// elimination) for alpha that varies along x and y (a layered stack with contrast 1000 and
// vias, a smooth field, a random field), Robin faces on x included, and the singular
// problems' are the ADI iteration's; the direct solve's preconditioning takes fewer
// iterations than the ADI iteration, and a spectral preconditioner asked for where it
// cannot run is refused with the reason.
#include "solvers/poisson_krylov.hpp"
#include "tests/unit/dense_reference.hpp"
#include "tests/unit/scoped_env.hpp"
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

// Faces only the ADI preconditioner takes: Robin on x (h on x- too), y faces that differ.
std::vector<KrylovCase> adi_preconditioned_cases() {
  BoundarySpec robin_x = faces(B::robin, B::neumann, B::dirichlet, B::neumann);
  robin_x.face[1] = B::robin;
  BoundarySpec mixed_y = faces(B::neumann, B::dirichlet, B::neumann, B::robin);
  mixed_y.face[3] = B::neumann;
  return {{"stack with vias, Robin sides", Field::stack_with_vias, robin_x, 0, 0},
          {"smooth, y faces that differ, Robin above", Field::smooth, mixed_y, 0, 3.0}};
}

const char* name_of(KrylovPreconditioner m) { return m == KrylovPreconditioner::spectral ? "spectral" : "adi"; }

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
// Where nothing anchors u (compatible data: any one equation follows from the others), the
// first node's equation is replaced by e = 0 and the solution shifted to zero mean, the
// solvers' choice.
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
  const bool singular = !anchored(d.bc, data);
  if (singular) {
    std::fill(matrix[0].begin(), matrix[0].end(), 0.0);
    matrix[0][0] = 1;
    b[0] = 0;
  }
  const std::vector<double> e = dense_solve(std::move(matrix), std::move(b));
  for (std::size_t q = 0; q < m; ++q) guess[unknowns[q]] += e[q];
  if (singular) {
    double mean = 0;
    for (double v : guess) mean += v / static_cast<double>(guess.size());
    for (double& v : guess) v -= mean;
  }
  return guess;
}

// The exact discrete solution of each case, from random data, to 1e-11 of the residual,
// with each preconditioner.
TEST(PoissonKrylov, VariableAlphaGivesTheExactDiscreteSolution) {
  std::vector<std::pair<KrylovCase, KrylovPreconditioner>> runs;
  for (const KrylovCase& c : krylov_cases())
    for (KrylovPreconditioner m : {KrylovPreconditioner::spectral, KrylovPreconditioner::adi}) runs.push_back({c, m});
  for (const KrylovCase& c : adi_preconditioned_cases()) runs.push_back({c, KrylovPreconditioner::adi});
  for (const auto& [c, preconditioner] : runs) {
    SCOPED_TRACE(std::string(c.name) + ", preconditioner " + name_of(preconditioner));
    KrylovProblem<double> p = krylov_problem<double>(c, {8, 7, 9});
    if (c.bc.face[0] == B::robin) {
      p.data.set_robin_h(0, 1.5);
      p.data.set_robin_h(1, 0.5);
    }
    const auto backend = make_cpu_backend<double>();
    ASSERT_EQ(krylov_obstacle(p.d, p.data, preconditioner), "");
    PoissonOptions options{1e-11, 500, 0};
    options.preconditioner = preconditioner;
    PoissonKrylov<double> krylov(*backend, p.d, p.data, options);
    const Solved<double> k = run<double>(*backend, p.d, [&](double* u) { return krylov.solve(u); });
    EXPECT_TRUE(k.report.converged) << k.report.relative_residual;
    EXPECT_LE(k.report.relative_residual, 1e-11);
    EXPECT_STREQ(k.report.method, "krylov");
    EXPECT_EQ(k.report.taus.empty(), preconditioner == KrylovPreconditioner::spectral);
    const std::vector<double> exact = dense_solution(*backend, p.d, p.data);
    EXPECT_LE(max_difference(k.u, exact), 1e-7 * max_abs(exact)) << k.report.iterations << " iterations";
  }
}

// Nothing anchors u (Neumann and periodic faces): the exact zero-mean solution of the data
// less its small incompatibility, with each preconditioner (the ADI iteration diverges on
// the random field: it is no reference here).
TEST(PoissonKrylov, SingularProblemsGiveTheExactZeroMeanSolution) {
  const BoundarySpec mixes[] = {faces(B::neumann, B::neumann, B::neumann, B::neumann),
                                faces(B::periodic, B::neumann, B::neumann, B::neumann)};
  for (const BoundarySpec& bc : mixes)
    for (Field field : {Field::smooth, Field::random, Field::stack_with_vias})
      for (KrylovPreconditioner preconditioner : {KrylovPreconditioner::spectral, KrylovPreconditioner::adi}) {
        SCOPED_TRACE(std::string(bc.periodic(0) ? "periodic x" : "insulated") + ", field " +
                     std::to_string(static_cast<int>(field)) + ", preconditioner " + name_of(preconditioner));
        std::mt19937 rng(7);
        Diffusion<double> d = make_diffusion<double>({8, 7, 9}, bc, false, rng);
        const std::vector<double> alpha = alpha_of(field, d.grid, rng);
        d.alpha_field.assign(alpha.begin(), alpha.end());
        const auto backend = make_cpu_backend<double>();
        RandomPoissonData<double> data(d.grid, 23);
        make_nearly_compatible<double>(*backend, d, data, 0.01);
        PoissonOptions options{1e-11, 500, 0};
        options.preconditioner = preconditioner;
        PoissonKrylov<double> krylov(*backend, d, data, options);
        const Solved<double> k = run<double>(*backend, d, [&](double* u) { return krylov.solve(u); });
        EXPECT_TRUE(k.report.converged) << k.report.relative_residual;
        EXPECT_NE(k.report.source_shift, 0.0);
        // The same data with the shift the solver removed: compatible.
        make_nearly_compatible<double>(*backend, d, data, 0.0);
        const std::vector<double> exact = dense_solution(*backend, d, data);
        EXPECT_LE(max_difference(k.u, exact), 1e-7 * max_abs(exact)) << k.report.iterations << " iterations";
      }
}

// Where the ADI iteration converges, the same solution; preconditioned by the direct solve
// in fewer iterations (on the stacks with vias, with their contrast of 1000 inside a plane,
// the iteration stagnates far off). A cycle of ADI steps as preconditioner costs a cycle an
// iteration: the counts are printed, for docs/numerics.md.
TEST(PoissonKrylov, FewerIterationsThanTheAdiIteration) {
  for (const KrylovCase& c : krylov_cases()) {
    SCOPED_TRACE(c.name);
    KrylovProblem<double> p = krylov_problem<double>(c, {17, 16, 20});
    const auto backend = make_cpu_backend<double>();
    PoissonKrylov<double> krylov(*backend, p.d, p.data, {1e-10, 500, 0});
    const Solved<double> k = run<double>(*backend, p.d, [&](double* u) { return krylov.solve(u); });
    EXPECT_TRUE(k.report.converged) << k.report.relative_residual;
    PoissonOptions by_adi{1e-10, 500, 0};
    by_adi.preconditioner = KrylovPreconditioner::adi;
    PoissonKrylov<double> cycles(*backend, p.d, p.data, by_adi);
    const Solved<double> ka = run<double>(*backend, p.d, [&](double* u) { return cycles.solve(u); });
    EXPECT_TRUE(ka.report.converged) << ka.report.relative_residual;
    const Solved<double> a = adi_solution(*backend, p.d, p.data, 1e-10);
    std::printf("[          ] %s: krylov %ld iterations (residual %.1e); by ADI cycles %ld x %zu steps (%.1e); "
                "adi %ld (%.1e)\n",
                c.name, k.report.iterations, k.report.relative_residual, ka.report.iterations, ka.report.taus.size(),
                ka.report.relative_residual, a.report.iterations, a.report.relative_residual);
    if (!a.report.converged) continue;
    EXPECT_LT(k.report.iterations, a.report.iterations);
    EXPECT_LE(max_difference(k.u, a.u), 1e-6 * max_abs(a.u));
    EXPECT_LE(max_difference(ka.u, a.u), 1e-6 * max_abs(a.u));
  }
}

// The direct solve's preconditioner scaled by sqrt(plane mean / alpha) on both sides (on by
// default; ADI3D_KRYLOV_SCALING=off leaves it out): the same solution, in half the
// iterations or fewer on the smooth field (11 against 29 here). The stacks with vias and
// the random field jump by more than kLargestScaledJump between neighbours in a plane:
// they are left unscaled (scaled, the random field took 81 iterations against 65).
TEST(PoissonKrylov, ScalingByAlphaCutsIterationsOnSmoothFields) {
  for (const KrylovCase& c : krylov_cases()) {
    SCOPED_TRACE(c.name);
    KrylovProblem<double> p = krylov_problem<double>(c, {17, 16, 20});
    const auto backend = make_cpu_backend<double>();
    const auto solve = [&](const char* scaling) {
      const ScopedEnv env("ADI3D_KRYLOV_SCALING", scaling);
      PoissonKrylov<double> krylov(*backend, p.d, p.data, {1e-10, 500, 0});
      return run<double>(*backend, p.d, [&](double* u) { return krylov.solve(u); });
    };
    const Solved<double> scaled = solve(nullptr), plain = solve("off");
    std::printf("[          ] %s: scaled %ld iterations, plain %ld\n", c.name, scaled.report.iterations,
                plain.report.iterations);
    EXPECT_TRUE(scaled.report.converged && plain.report.converged);
    EXPECT_LE(max_difference(scaled.u, plain.u), 1e-7 * max_abs(plain.u));
    if (c.field == Field::smooth) {
      EXPECT_LE(2 * scaled.report.iterations, plain.report.iterations);
    } else {
      EXPECT_EQ(scaled.report.iterations, plain.report.iterations);
      EXPECT_EQ(scaled.u, plain.u);
    }
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
  for (KrylovPreconditioner preconditioner : {KrylovPreconditioner::spectral, KrylovPreconditioner::adi}) {
    PoissonOptions options{1e-4, 500, 0};
    options.preconditioner = preconditioner;
    PoissonKrylov<float> krylov(*backend, d, data, options);
    const Solved<float> k = run<float>(*backend, d, [&](float* u) { return krylov.solve(u); });
    EXPECT_TRUE(k.report.converged) << name_of(preconditioner) << ": " << k.report.relative_residual << " after "
                                    << k.report.iterations;
  }
}

// The direct solve as preconditioner where it cannot run is refused with the reason; auto
// then takes the ADI cycle.
TEST(PoissonKrylov, SpectralPreconditionerRefusesFacesItDoesNotTake) {
  std::mt19937 rng(1);
  const auto backend = make_cpu_backend<double>();
  RandomPoissonData<double> data(Grid3{}, 2);
  const Diffusion<double> side =
      make_diffusion<double>({5, 5, 5}, faces(B::robin, B::neumann, B::dirichlet, B::dirichlet), true, rng);
  data.set_robin_h(0, 1.0);
  const std::string why = krylov_obstacle(side, data, KrylovPreconditioner::spectral);
  EXPECT_NE(why.find("robin"), std::string::npos) << why;
  EXPECT_NE(why.find("solver.preconditioner = adi"), std::string::npos) << why;
  PoissonOptions options;
  options.preconditioner = KrylovPreconditioner::spectral;
  EXPECT_THROW(PoissonKrylov<double>(*backend, side, data, options), std::invalid_argument);
  EXPECT_EQ(krylov_preconditioner(side, data, KrylovPreconditioner::automatic), KrylovPreconditioner::adi);
  const Diffusion<double> box =
      make_diffusion<double>({5, 5, 5}, faces(B::neumann, B::neumann, B::dirichlet, B::dirichlet), true, rng);
  EXPECT_EQ(krylov_preconditioner(box, data, KrylovPreconditioner::automatic), KrylovPreconditioner::spectral);
  EXPECT_EQ(krylov_obstacle(side, data, KrylovPreconditioner::adi), "");
}

}  // namespace
}  // namespace adi3d::test
