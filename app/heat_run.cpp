#include "app/heat_run.hpp"

#include "app/finite_check.hpp"
#include "app/progress.hpp"
#include "app/run_failure.hpp"
#include "app/stop_agreement.hpp"
#include "solvers/douglas_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace adi3d::app {

long step_count(double t_end, double dt) {
  // A relative slack so that t_end = 100 * dt is 100 steps despite rounding.
  return static_cast<long>(std::ceil(t_end / dt * (1.0 - 1e-12)));
}

template <class T>
physics::ErrorNorms error_against(const physics::GridFormula<T>& exact, double t, Backend<T>& backend, const T* u,
                                  Communicator* comm, T* error) {
  const SlabDecomposition& slab = exact.slab();
  const std::size_t n = slab.local.size();
  Array<T> scratch;
  if (!error) {
    scratch = backend.allocate(n);
    error = scratch.data();
  }
  exact.sample_error(t, u, error, backend);
  require_finite_sampling(exact.first_non_finite(), slab.distributed() ? comm : nullptr);
  // A distributed backend's norms of grid arrays cover every rank's owned planes.
  return physics::to_error_norms(backend.difference_norms(error, nullptr, n), slab.whole.size());
}

template <class T>
RunResult run_heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
                   bool interactive, RunObserver<T>* observer, const HeatStart<T>* restart) {
  require_loaded(problem);
  const Grid3& grid = problem.diffusion.grid;
  RunResult result;
  RunTimings& times = result.timings;
  auto clock = std::chrono::steady_clock::now();
  Array<T> u = backend.allocate(grid.size());
  const long first = restart ? restart->step : 0;
  double t = restart ? restart->t : 0.0;
  if (restart) {
    backend.upload(restart->u, u.data(), grid.size());
  } else {
    problem.initial->sample(0.0, u.data(), backend);
    require_finite_sampling(problem.initial->first_non_finite(), problem.comm);
  }
  DouglasStepper<T> stepper(backend, problem.diffusion, *problem.forcing, config.theta);
  // On a restart this re-imposes the Dirichlet data at the checkpoint's time: the values
  // the uninterrupted run imposed there, so the continuation is bit for bit the same.
  stepper.initialize(u.data(), t);
  backend.synchronize();
  times.initial = seconds_since(clock);
  times.compile = problem.initial->compile_seconds();

  result.points = problem.diffusion.whole_grid().size();
  const long steps = step_count(config.t_end, config.dt);
  Progress progress("heat", steps, interactive);
  // Checks and outputs among the steps, timed apart from them (run_timings.hpp).
  auto timed = [&](double& phase, auto&& work) {
    backend.synchronize();
    const auto from = std::chrono::steady_clock::now();
    work();
    phase += seconds_since(from);
  };
  if (observer) timed(times.output, [&] { observer->on_start(first, t, backend, u.data()); });
  StopAgreement stop(problem.diffusion.slab.distributed() ? problem.comm : nullptr);
  long done = std::max(steps, first);
  const double output_before = times.output;
  const auto start = std::chrono::steady_clock::now();
  const std::string device = backend.description();
  long s = first;
  double from = t;
  try {
    for (; s < steps; ++s) {
      from = t;
      const double dt = std::min(config.dt, config.t_end - t);
      stepper.step(u.data(), t, dt);
      t = (s + 1 == steps) ? config.t_end : t + dt;
      const bool writes = observer && observer->writes_at(s + 1, t);
      if ((s + 1) % kFiniteCheckEvery == 0 || s + 1 == steps || writes)
        timed(times.checks,
              [&] { require_finite_run(problem, backend, u.data(), fmt::format("at step {} (t = {:.6g})", s + 1, t)); });
      if (writes)
        timed(times.output, [&] { observer->on_step(s + 1, t, backend, u.data()); });
      else if (observer)
        observer->on_step(s + 1, t, backend, u.data());
      progress.update(s + 1, fmt::format("t = {:.4g}", t));
      // After the last step the run simply ends: there is nothing left to continue.
      if (s + 1 < steps && (result.stopped_by = stop.poll()) != 0) {
        done = s + 1;
        break;
      }
    }
    stop.finish();
    // Where kernels fail asynchronously, this is where the last steps' faults surface.
    backend.synchronize();
  } catch (...) {
    // A fault that surfaces at a synchronisation names the step that waited for it.
    rethrow_placed(fmt::format("in step {} of {} (from t = {:.6g}) on {}", std::min(s + 1, steps), steps, from, device));
  }
  progress.finish();
  result.wall_seconds = seconds_since(start);
  times.stepping = result.wall_seconds - times.checks - (times.output - output_before);
  result.steps = done;
  result.t_final = t;
  result.fused_steps = stepper.fused_steps();
  clock = std::chrono::steady_clock::now();
  try {
    if (result.stopped_by) {
      // The checkpoint is written from this field: check it as before any other write.
      require_finite_run(problem, backend, u.data(), fmt::format("at step {} (t = {:.6g})", done, t));
      if (observer) observer->on_stop(done, t, backend, u.data());
    } else if (observer) {
      observer->on_end(result.steps, t, backend, u.data());
    }
  } catch (...) {
    rethrow_placed(fmt::format("writing the outputs after step {} (t = {:.6g}) on {}", done, t, device));
  }
  times.output += seconds_since(clock);
  if (problem.exact) {
    clock = std::chrono::steady_clock::now();
    result.error = error_against(*problem.exact, t, backend, u.data(), problem.comm);
    times.error = seconds_since(clock);
    times.compile += problem.exact->compile_seconds();
  }
  return result;
}

template RunResult run_heat(const io::RunConfig&, const ProblemSetup<float>&, Backend<float>&, bool,
                            RunObserver<float>*, const HeatStart<float>*);
template RunResult run_heat(const io::RunConfig&, const ProblemSetup<double>&, Backend<double>&, bool,
                            RunObserver<double>*, const HeatStart<double>*);
template physics::ErrorNorms error_against(const physics::GridFormula<float>&, double, Backend<float>&, const float*,
                                           Communicator*, float*);
template physics::ErrorNorms error_against(const physics::GridFormula<double>&, double, Backend<double>&,
                                           const double*, Communicator*, double*);

}  // namespace adi3d::app
