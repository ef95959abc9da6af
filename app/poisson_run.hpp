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
  double wall_seconds = 0;
  int stopped_by = 0;  // the signal that ended the iteration early (stop_signals.hpp), else 0
  std::optional<physics::ErrorNorms> error;
  RunTimings timings;  // all but setup (the caller's)
};

// The observer (snapshot pipeline) sees the converged field once, as its end state; a
// solve stopped by a signal hands it the current iterate the same way.
template <class T>
PoissonResult run_poisson(const io::RunConfig& config, const ProblemSetup<T>& problem,
                          Backend<T>& backend, bool interactive, RunObserver<T>* observer = nullptr);

}  // namespace adi3d::app
