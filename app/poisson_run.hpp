#pragma once
// The Poisson solve: initial guess, ADI iteration with progress, errors against the exact
// solution when the deck gives one.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"
#include "solvers/poisson_adi.hpp"

#include <optional>

namespace adi3d::app {

// auto abandons an ADI iteration whose residual grows past this (relative to its first):
// the iteration has diverged. Converging ones peak far below it (docs/numerics.md).
constexpr double kAdiDiverged = 1e3;

struct PoissonResult {
  PoissonReport report;
  // auto: the ADI iteration that diverged before report's conjugate gradients (from the same
  // initial guess) solved the problem.
  std::optional<PoissonReport> abandoned;
  double tolerance = 0;  // the relative residual asked for (poisson_tolerance)
  double wall_seconds = 0;
  int stopped_by = 0;  // the signal that ended the iteration early (stop_signals.hpp), else 0
  std::optional<physics::ErrorNorms> error;
  RunTimings timings;  // all but setup (the caller's)
};

// The method the run solves by: solver.method, or for auto the direct solve where the
// problem separates and the run has one rank (poisson_spectral.hpp); else, where alpha
// varies inside planes on one rank, conjugate gradients preconditioned by the direct solve
// (poisson_krylov.hpp) on the CPU, and on a GPU where that preconditioning is scaled
// (krylov_scales); else the ADI iteration, which run_poisson abandons for conjugate
// gradients where it diverges. Measured on inputs/poisson_variable.ini
// (docs/perf/poisson_krylov_*): on the CPU (2 cores, 129^3) CG takes 1.25 s against
// ADI's 2.57 s; on an H200 (257^3 double) 21 ms (scaled, 4 iterations) against ADI's 57 ms,
// and unscaled (a field with jumps) 62 ms.
template <class T>
io::PoissonMethod poisson_method(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend);

// solver.preconditioner as the Krylov solve takes it.
inline KrylovPreconditioner krylov_preconditioner_choice(const io::RunConfig& config) {
  switch (config.preconditioner) {
    case io::PreconditionerChoice::spectral:
      return KrylovPreconditioner::spectral;
    case io::PreconditionerChoice::adi:
      return KrylovPreconditioner::adi;
    default:
      return KrylovPreconditioner::automatic;
  }
}

// solver.tol, or where the deck names none, what the solve's precision reaches
// (default_tolerance: float's from the grid; double's for double and mixed).
template <class T>
double poisson_tolerance(const io::RunConfig& config, const Diffusion<T>& diffusion, const Forcing<T>& forcing);

// The observer (snapshot pipeline) sees the final field once, as its end state, whether
// the iteration converged, stagnated, ran out of iterations or was stopped by a signal.
// solver.precision = mixed (T double) solves by float sweeps on a float backend of the same
// kind and device (poisson_mixed.hpp). method: poisson_method's answer where the caller
// has it (finding it reads an alpha field back from the device: 0.09 s at 257^3 double).
template <class T>
PoissonResult run_poisson(const io::RunConfig& config, const ProblemSetup<T>& problem,
                          Backend<T>& backend, bool interactive, RunObserver<T>* observer = nullptr,
                          std::optional<io::PoissonMethod> method = std::nullopt);

}  // namespace adi3d::app
