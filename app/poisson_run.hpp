#pragma once
// The Poisson solve: initial guess, ADI iteration with progress, errors against the exact
// solution when the deck gives one.
#include "app/problem_setup.hpp"
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"
#include "solvers/poisson_adi.hpp"

#include <optional>

namespace adi3d::app {

struct PoissonResult {
  PoissonReport report;
  double wall_seconds = 0;
  std::optional<physics::ErrorNorms> error;
};

template <class T>
PoissonResult run_poisson(const io::RunConfig& config, const ProblemSetup<T>& problem,
                          Backend<T>& backend, bool interactive);

}  // namespace adi3d::app
