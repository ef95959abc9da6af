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

struct PoissonResult {
  PoissonReport report;
  double tolerance = 0;  // the relative residual asked for (poisson_tolerance)
  double wall_seconds = 0;
  int stopped_by = 0;  // the signal that ended the iteration early (stop_signals.hpp), else 0
  std::optional<physics::ErrorNorms> error;
  RunTimings timings;  // all but setup (the caller's)
};

// The method the run solves by: solver.method, or for auto the direct solve where the
// problem separates and the run has one rank (poisson_spectral.hpp), conjugate gradients
// where alpha varies inside planes (poisson_krylov.hpp: the ADI iteration takes several
// times their steps there, or diverges: docs/numerics.md), else the ADI iteration.
// Collective on a split run (its ranks agree).
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
// kind and device (poisson_mixed.hpp).
template <class T>
PoissonResult run_poisson(const io::RunConfig& config, const ProblemSetup<T>& problem,
                          Backend<T>& backend, bool interactive, RunObserver<T>* observer = nullptr);

}  // namespace adi3d::app
