#include "app/poisson_run.hpp"

#include "app/backend_choice.hpp"
#include "app/finite_check.hpp"
#include "app/heat_run.hpp"
#include "app/progress.hpp"
#include "app/run_failure.hpp"
#include "app/stop_agreement.hpp"
#include "solvers/poisson_krylov.hpp"
#include "solvers/poisson_mixed.hpp"
#include "solvers/poisson_spectral.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace adi3d::app {

template <class T>
PoissonResult run_poisson(const io::RunConfig& config, const ProblemSetup<T>& problem,
                          Backend<T>& backend, bool interactive, RunObserver<T>* observer,
                          std::optional<io::PoissonMethod> method) {
  require_loaded(problem);
  PoissonResult result;
  RunTimings& times = result.timings;
  auto clock = std::chrono::steady_clock::now();
  Array<T> u = backend.allocate(problem.diffusion.grid.size());
  problem.initial->sample(0.0, u.data(), backend);
  require_finite_sampling(problem.initial->first_non_finite(), problem.comm);
  backend.synchronize();
  times.initial = seconds_since(clock);
  times.compile = problem.initial->compile_seconds();
  PoissonOptions options;
  options.tol = result.tolerance = poisson_tolerance(config, problem.diffusion, *problem.forcing);
  options.max_iter = config.max_iter;
  options.cycle = config.adi_cycle;
  options.preconditioner = krylov_preconditioner_choice(config);

  // Progress in digits of residual reduction: iterations are not known in advance. A mixed
  // solve counts float sweeps, each an iteration's work, and names the refinement.
  const double target_digits = -std::log10(options.tol);
  Progress progress("poisson", static_cast<long>(std::ceil(target_digits * 10)), interactive);
  long reached = 0;  // the last iteration (or sweep) reported, for a failure's message
  const auto show = [&](long k, long refinement, double relative) {
    reached = k;
    const double digits = relative > 0 ? -std::log10(relative) : target_digits;
    progress.update(std::min(static_cast<long>(digits * 10), static_cast<long>(target_digits * 10) - 1),
                    refinement > 0 ? fmt::format("sweep {} (refinement {}), residual {:.2e}", k, refinement, relative)
                                   : fmt::format("iteration {}, residual {:.2e}", k, relative));
  };
  // A signal ends the iteration (stop_signals.hpp); the iterate is the result, as no
  // checkpoint format exists for a Poisson solve to continue from.
  StopAgreement stop(problem.diffusion.slab.distributed() ? problem.comm : nullptr);
  const auto stopping = [&] { return (result.stopped_by = stop.poll()) != 0; };
  const auto start = std::chrono::steady_clock::now();
  const std::string device = backend.description();
  try {
    if (!method) method = poisson_method(config, problem, backend);
    // auto: the ADI iteration, abandoned where it diverges (alpha that varies strongly
    // inside planes undoes it: docs/numerics.md) for conjugate gradients from the guess.
    const bool may_abandon = config.method == io::PoissonMethod::automatic;
    double latest = 0;
    bool diverged = false;
    const auto watch = [&](long k, long refinement, double relative) {
      latest = relative;
      show(k, refinement, relative);
    };
    const auto stop_adi = [&] { return stopping() || (diverged = may_abandon && latest > kAdiDiverged); };
    if (*method == io::PoissonMethod::spectral) {
      // One solve in T; with solver.precision = mixed T is double: the direct solve needs no
      // float sweeps to reach double's residual.
      PoissonSpectral<T> solver(backend, problem.diffusion, *problem.forcing, options);
      result.report = solver.solve(u.data());
    } else if (*method == io::PoissonMethod::krylov) {
      // In T; with solver.precision = mixed T is double (the sweeps of a mixed solve are ADI's).
      PoissonKrylov<T> solver(backend, problem.diffusion, *problem.forcing, options);
      result.report = solver.solve(u.data(), [&](long k, double relative) { show(k, 0, relative); }, stopping);
    } else if (config.mixed) {
      if constexpr (std::is_same_v<T, double>) {
        const std::unique_ptr<Backend<float>> sweeps = companion_backend(backend, problem.diffusion.slab, problem.comm);
        PoissonMixed solver(backend, *sweeps, problem.diffusion, *problem.forcing, options);
        result.report = solver.solve(u.data(), watch, stop_adi);
      } else {
        throw std::logic_error("solver.precision = mixed runs with a double problem");
      }
    } else {
      PoissonAdi<T> solver(backend, problem.diffusion, *problem.forcing, options);
      result.report = solver.solve(u.data(), [&](long k, double relative) { watch(k, 0, relative); }, stop_adi);
    }
    const PoissonReport& tried = result.report;
    if (*method == io::PoissonMethod::adi && may_abandon && !result.stopped_by &&
        (diverged || tried.non_finite || (tried.stagnated && tried.relative_residual > 1))) {
      result.abandoned = result.report;
      problem.initial->sample(0.0, u.data(), backend);
      PoissonKrylov<T> solver(backend, problem.diffusion, *problem.forcing, options);
      result.report = solver.solve(u.data(), [&](long k, double relative) { show(k, 0, relative); }, stopping);
    }
    stop.finish();
    backend.synchronize();
  } catch (...) {
    rethrow_placed(reached > 0 ? fmt::format("in the Poisson solve, after iteration {}, on {}", reached, device)
                               : fmt::format("in the Poisson solve on {}", device));
  }
  progress.finish();
  result.wall_seconds = seconds_since(start);
  times.stepping = result.wall_seconds;
  if (result.report.non_finite) {
    // Before anything is written: the data's fault (a deck error), else the field's.
    const std::string when = fmt::format("at Poisson iteration {}", result.report.iterations);
    require_finite_run(problem, backend, u.data(), when);
    throw FieldNotFinite(fmt::format("the Poisson residual is no longer finite {} although the field and the "
                                     "data are: their values overflow; rescale the problem",
                                     when));
  }
  if (problem.exact) {
    clock = std::chrono::steady_clock::now();
    result.error = error_against(*problem.exact, 0.0, backend, u.data(), problem.comm);
    times.error = seconds_since(clock);
    times.compile += problem.exact->compile_seconds();
  }
  clock = std::chrono::steady_clock::now();
  if (observer) observer->on_end(result.report.iterations, 0.0, backend, u.data());
  times.output = seconds_since(clock);
  return result;
}

template <class T>
io::PoissonMethod poisson_method(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend) {
  if (config.method != io::PoissonMethod::automatic) return config.method;
  const SpectralObstacle obstacle = spectral_obstacle(problem.diffusion, *problem.forcing, backend);
  if (obstacle.none()) return io::PoissonMethod::spectral;
  // One rank, faces the direct solve takes, alpha varying inside planes (its obstacle): on
  // the CPU, CG preconditioned by the direct solve is the faster; on a GPU, where that
  // preconditioning is scaled (alpha without jumps inside planes).
  const bool field_inside_planes = obstacle.face == -1 && !problem.diffusion.slab.distributed();
  if (field_inside_planes &&
      (backend.kind() == BackendKind::cpu || krylov_scales(problem.diffusion, backend)))
    return io::PoissonMethod::krylov;
  return io::PoissonMethod::adi;
}

template <class T>
double poisson_tolerance(const io::RunConfig& config, const Diffusion<T>& diffusion, const Forcing<T>& forcing) {
  return config.tol > 0 ? config.tol : default_tolerance(diffusion, robin_h_ranges(diffusion.whole_bc(), forcing));
}

template io::PoissonMethod poisson_method(const io::RunConfig&, const ProblemSetup<float>&, Backend<float>&);
template io::PoissonMethod poisson_method(const io::RunConfig&, const ProblemSetup<double>&, Backend<double>&);
template double poisson_tolerance(const io::RunConfig&, const Diffusion<float>&, const Forcing<float>&);
template double poisson_tolerance(const io::RunConfig&, const Diffusion<double>&, const Forcing<double>&);
template PoissonResult run_poisson(const io::RunConfig&, const ProblemSetup<float>&, Backend<float>&, bool,
                                   RunObserver<float>*, std::optional<io::PoissonMethod>);
template PoissonResult run_poisson(const io::RunConfig&, const ProblemSetup<double>&, Backend<double>&,
                                   bool, RunObserver<double>*, std::optional<io::PoissonMethod>);

}  // namespace adi3d::app
