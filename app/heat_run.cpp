#include "app/heat_run.hpp"

#include "app/finite_check.hpp"
#include "app/progress.hpp"
#include "app/stop_agreement.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/distributed/local_slab.hpp"
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
physics::ErrorNorms error_against(const physics::Formula& exact, const Diffusion<T>& diffusion, double t,
                                  Backend<T>& backend, const T* u, Communicator* comm) {
  const Grid3& grid = diffusion.grid;
  std::vector<T> host(grid.size());
  require_finite_sampling(exact, t, physics::sample_grid(exact, grid, t, host.data()),
                          diffusion.slab.distributed() ? comm : nullptr);
  Array<T> reference = backend.allocate(grid.size());
  backend.upload(host.data(), reference.data(), grid.size());
  // A distributed backend's norms of grid arrays cover every rank's owned planes.
  return physics::to_error_norms(backend.difference_norms(u, reference.data(), grid.size()),
                                 diffusion.whole_grid().size());
}

template <class T>
RunResult run_heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
                   bool interactive, RunObserver<T>* observer, const HeatStart<T>* restart) {
  const Grid3& grid = problem.diffusion.grid;
  Array<T> u = backend.allocate(grid.size());
  const long first = restart ? restart->step : 0;
  double t = restart ? restart->t : 0.0;
  if (restart) {
    const std::vector<T> slab = local_slab<T>(problem.diffusion.slab, restart->u);
    backend.upload(slab.data(), u.data(), grid.size());
  } else {
    std::vector<T> host(grid.size());
    require_finite_sampling(problem.initial, 0.0, physics::sample_grid(problem.initial, grid, 0.0, host.data()),
                            problem.comm);
    backend.upload(host.data(), u.data(), grid.size());
  }
  DouglasStepper<T> stepper(backend, problem.diffusion, *problem.forcing, config.theta);
  // On a restart this re-imposes the Dirichlet data at the checkpoint's time: the values
  // the uninterrupted run imposed there, so the continuation is bit for bit the same.
  stepper.initialize(u.data(), t);

  RunResult result;
  result.points = problem.diffusion.whole_grid().size();
  const long steps = step_count(config.t_end, config.dt);
  Progress progress("heat", steps, interactive);
  if (observer) observer->on_start(first, t, backend, u.data());
  StopAgreement stop(problem.diffusion.slab.distributed() ? problem.comm : nullptr);
  long done = std::max(steps, first);
  const auto start = std::chrono::steady_clock::now();
  for (long s = first; s < steps; ++s) {
    const double dt = std::min(config.dt, config.t_end - t);
    stepper.step(u.data(), t, dt);
    t = (s + 1 == steps) ? config.t_end : t + dt;
    if ((s + 1) % kFiniteCheckEvery == 0 || s + 1 == steps || (observer && observer->writes_at(s + 1, t)))
      require_finite_run(problem, backend, u.data(), fmt::format("at step {} (t = {:.6g})", s + 1, t));
    if (observer) observer->on_step(s + 1, t, backend, u.data());
    progress.update(s + 1, fmt::format("t = {:.4g}", t));
    // After the last step the run simply ends: there is nothing left to continue.
    if (s + 1 < steps && (result.stopped_by = stop.poll()) != 0) {
      done = s + 1;
      break;
    }
  }
  stop.finish();
  backend.synchronize();
  progress.finish();
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.steps = done;
  result.t_final = t;
  result.fused_steps = stepper.fused_steps();
  if (result.stopped_by) {
    // The checkpoint is written from this field: check it as before any other write.
    require_finite_run(problem, backend, u.data(), fmt::format("at step {} (t = {:.6g})", done, t));
    if (observer) observer->on_stop(done, t, backend, u.data());
  } else if (observer) {
    observer->on_end(result.steps, t, backend, u.data());
  }
  if (problem.exact)
    result.error = error_against(*problem.exact, problem.diffusion, t, backend, u.data(), problem.comm);
  return result;
}

template RunResult run_heat(const io::RunConfig&, const ProblemSetup<float>&, Backend<float>&, bool,
                            RunObserver<float>*, const HeatStart<float>*);
template RunResult run_heat(const io::RunConfig&, const ProblemSetup<double>&, Backend<double>&, bool,
                            RunObserver<double>*, const HeatStart<double>*);
template physics::ErrorNorms error_against(const physics::Formula&, const Diffusion<float>&, double,
                                           Backend<float>&, const float*, Communicator*);
template physics::ErrorNorms error_against(const physics::Formula&, const Diffusion<double>&, double,
                                           Backend<double>&, const double*, Communicator*);

}  // namespace adi3d::app
