#pragma once
// Poisson in float and in mixed precision (issue 39 item 3): the cases and checks that the
// CPU backend (tests/regression/test_poisson_precision.cpp) and the CUDA backend
// (tests/gpu/test_cuda_poisson_precision.cpp) both pass, against the CPU's double solve.
#include "deck_runner.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace adi3d::test {

// These checks are of the ADI iteration's precisions (its floors, refinements, sweeps):
// solver.method = adi, as auto solves these decks directly.
inline PoissonRun run_adi_example(const std::string& deck_name, std::vector<std::string> overrides,
                                  BackendKind kind = BackendKind::cpu) {
  overrides.push_back("solver.method=adi");
  return run_poisson_example(deck_name, std::move(overrides), kind);
}

inline std::vector<std::string> with(std::vector<std::string> sets, std::initializer_list<std::string> more) {
  sets.insert(sets.end(), more);
  return sets;
}

struct PrecisionCase {
  const char* deck;
  std::vector<std::string> sets;
};

inline void PrintTo(const PrecisionCase& c, std::ostream* os) {
  *os << c.deck;
  for (const std::string& s : c.sets) *os << " " << s;
}

// Every Poisson deck, a periodic axis beside Dirichlet faces, a singular problem with an
// alpha field (1 on the x faces, so that the data still balance) and two materials.
inline std::vector<PrecisionCase> mixed_precision_cases() {
  return {PrecisionCase{"poisson_dirichlet.ini", {"grid.n=33"}},
          PrecisionCase{"poisson_neumann.ini", {"grid.n=33"}},
          PrecisionCase{"poisson_periodic.ini", {"grid.n=32"}},
          PrecisionCase{"poisson_dirichlet.ini", {"grid.n=33 24 17", "boundary.y-=periodic", "boundary.y+=periodic"}},
          PrecisionCase{"poisson_neumann.ini",
                        {"grid.n=25", "material.diffusivity=formula 1 + 0.5*sin(pi*x)*cos(pi*y)"}},
          PrecisionCase{"slab_two_layer.ini", {}},
          PrecisionCase{"poisson_robin.ini", {"grid.n=33"}}};
}

// solver.precision = mixed on `kind` reaches solver.tol = 1e-10 in a few refinements and
// gives the CPU double solve's solution. The CPU's sweeps round as its double iteration
// does, so they are that iteration's, within `extra_sweeps`, and its field within
// `field_tolerance` (measured on the CPU: as many sweeps, fields within 1e-12).
inline void expect_mixed_reaches_ten_digits(const PrecisionCase& c, BackendKind kind, long extra_sweeps,
                                            double field_tolerance) {
  const std::vector<std::string> sets = with(c.sets, {"solver.tol=1e-10", "solver.max_iter=2000"});
  const PoissonRun reference = run_adi_example(c.deck, with(sets, {"solver.precision=double"}));
  const PoissonRun mixed = run_adi_example(c.deck, with(sets, {"solver.precision=mixed"}), kind);
  const PoissonReport& d = reference.result.report;
  const PoissonReport& m = mixed.result.report;
  ASSERT_TRUE(d.converged) << c.deck;
  EXPECT_TRUE(m.converged) << c.deck << ": relative residual " << m.relative_residual;
  EXPECT_LE(m.relative_residual, 1e-10) << c.deck;
  // Plain float stops near 1e-5: the double residual took it further, in a few refinements.
  EXPECT_GE(m.refinements, 2) << c.deck;
  EXPECT_LE(m.refinements, 4) << c.deck;
  EXPECT_EQ(m.refinement_history.size(), static_cast<std::size_t>(m.refinements) + 1) << c.deck;
  EXPECT_EQ(m.history.size(), static_cast<std::size_t>(m.iterations)) << c.deck;
  // The sweeps go on with the double iteration's parameter cycle: rounding aside, they are
  // its iterations.
  EXPECT_LE(m.iterations, d.iterations + extra_sweeps) << c.deck << ": double took " << d.iterations;
  EXPECT_NEAR(m.source_shift, d.source_shift, 1e-12 * (1 + std::abs(d.source_shift))) << c.deck;
  EXPECT_LE(field_difference(mixed.field, reference.field), field_tolerance) << c.deck;
  ASSERT_TRUE(mixed.result.error && reference.result.error);
  EXPECT_NEAR(mixed.result.error->max, reference.result.error->max, 1e-8 * reference.result.error->max + 1e-12)
      << c.deck;
}

// A float solve asked for less than its rounding floor stops there (stagnated) with its
// iterate, as good as the floor allows (measured on the CPU: within 4e-7 of the double
// solution, the same error against the exact one to 3e-6).
inline void expect_float_stagnation_keeps_its_iterate(BackendKind kind) {
  const std::vector<std::string> sets{"grid.n=33", "solver.tol=1e-6", "solver.max_iter=1000"};
  const PoissonRun f = run_adi_example("poisson_neumann.ini", with(sets, {"solver.precision=float"}), kind);
  const PoissonRun d = run_adi_example("poisson_neumann.ini", with(sets, {"solver.precision=double"}));
  const PoissonReport& r = f.result.report;
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(r.stagnated);
  EXPECT_LT(r.iterations, 1000);
  EXPECT_GT(r.relative_residual, 1e-6);
  EXPECT_LT(r.relative_residual, 1e-4);
  EXPECT_EQ(r.history.size(), static_cast<std::size_t>(r.iterations));
  EXPECT_EQ(f.result.tolerance, 1e-6);
  ASSERT_TRUE(f.result.error && d.result.error);
  EXPECT_NEAR(f.result.error->l2, d.result.error->l2, 1e-4 * d.result.error->l2);
  EXPECT_LE(field_difference(f.field, d.field), 1e-5);
}

// Without solver.tol a float solve aims where it arrives: above its rounding floor on this
// grid (which grows like h^-2), and 1e-5 at least; data in the lowest mode, whose floor is
// highest, included.
inline void expect_float_default_tolerance_reached(BackendKind kind) {
  for (const PrecisionCase& c : {PrecisionCase{"poisson_neumann.ini", {"grid.n=65"}},
                                 PrecisionCase{"poisson_periodic.ini", {"grid.n=64"}},
                                 PrecisionCase{"poisson_neumann.ini",
                                               {"grid.n=65", "source.f=pi^2*cos(pi*x)", "boundary.x-=neumann 0",
                                                "boundary.x+=neumann 0", "check.exact=cos(pi*x)"}}}) {
    const PoissonRun f = run_adi_example(c.deck, with(c.sets, {"solver.precision=float"}), kind);
    EXPECT_TRUE(f.result.report.converged) << c.deck << ": stopped at " << f.result.report.relative_residual
                                           << " for tol " << f.result.tolerance;
    EXPECT_GT(f.result.tolerance, 1e-5) << c.deck;
    EXPECT_LT(f.result.tolerance, 1e-3) << c.deck;
  }
}

}  // namespace adi3d::test
