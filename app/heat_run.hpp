#pragma once
// The heat run loop: initial data, Douglas steps to t_end with progress, errors against
// the exact solution when the deck gives one.
#include "app/problem_setup.hpp"
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"

#include <optional>
#include <string>

namespace adi3d::app {

struct RunResult {
  long steps = 0;
  double t_final = 0;
  double wall_seconds = 0;   // stepping only
  std::size_t points = 0;
  std::optional<physics::ErrorNorms> error;
};

template <class T>
RunResult run_heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
                   bool interactive);

// Errors of a backend field against the exact formula at time t.
template <class T>
physics::ErrorNorms error_against(const physics::Formula& exact, const Grid3& grid, double t,
                                  Backend<T>& backend, const T* u);

// Number of steps to reach t_end with steps of at most dt (the last one may be shorter).
long step_count(double t_end, double dt);

}  // namespace adi3d::app
