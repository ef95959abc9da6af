// adi3d run DECK: validate, set up, run, summarise.
#include "app/backend_choice.hpp"
#include "app/command_line.hpp"
#include "app/commands.hpp"
#include "app/finite_check.hpp"
#include "app/heat_run.hpp"
#include "app/output_dir.hpp"
#include "io/snapshot_files.hpp"
#include "app/poisson_run.hpp"
#include "solvers/poisson_krylov.hpp"
#include "solvers/poisson_spectral.hpp"
#include "app/problem_setup.hpp"
#include "app/progress.hpp"
#include "app/rank_agreement.hpp"
#include "app/run_failure.hpp"
#include "app/snapshot_pipeline.hpp"
#include "app/stop_signals.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/distributed/distributed_backend.hpp"
#include "solvers/distributed/mpi_session.hpp"
#include "io/checkpoint.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <type_traits>

namespace adi3d::app {
namespace {

void print_errors(const std::optional<physics::ErrorNorms>& error, nlohmann::json& summary) {
  if (error) {
    std::printf("  L2 error     %.6e\n  max error    %.6e\n", error->l2, error->max);
    summary["error"] = {{"l2", error->l2}, {"max", error->max}};
  } else {
    std::printf("  error        not checked (no check.exact in the deck)\n");
  }
}

// How a run reports, and the seconds it spent before heat() or poisson() ran it.
struct Reporting {
  bool interactive = false;
  bool verbose = false;
  std::chrono::steady_clock::time_point start;  // the process's
  RunTimings before;                            // setup, and a diffusivity formula's sampling
};

// The run's timings in the summary JSON, and on stdout with --verbose.
void report_timings(const Reporting& how, const RunTimings& run, nlohmann::json& summary) {
  RunTimings t = run;
  t.setup = how.before.setup;
  t.initial += how.before.initial;
  t.compile += how.before.compile;
  const double total = seconds_since(how.start);
  summary["timings"] = {{"setup", t.setup},   {"initial", t.initial}, {"compile", t.compile},
                        {"stepping", t.stepping}, {"checks", t.checks},   {"output", t.output},
                        {"error", t.error},   {"total", total}};
  if (!how.verbose) return;
  const std::string compiled = t.compile > 0 ? fmt::format(" (of which {:.3f} s compiling for the GPU)", t.compile) : "";
  std::printf("  timings      set-up %.3f s, initial data %.3f s%s, stepping %.3f s, checks %.3f s, output %.3f s, "
              "errors %.3f s; %.3f s since the process began\n",
              t.setup, t.initial, compiled.c_str(), t.stepping, t.checks, t.output, t.error, total);
}

// A run stopped by a signal: one line on stderr (rank 0) that says what was kept and how to
// go on, and the shell's code for the signal.
int stopped(int signal, const std::string& line, bool root) {
  if (root) std::fprintf(stderr, "adi3d: stopped by %s: %s\n", signal_name(signal), line.c_str());
  return exit_code_for(signal);
}

// What a failed heat run leaves to continue from: the last checkpoint, read back (its
// checksums checked) before it is offered where `verify` (one rank: the writes have
// finished; on several, another rank's writer may still be inside HDF5).
std::string checkpoint_left(const io::RunConfig& config, const std::string& to_restart, bool verify) {
  const std::string path = (std::filesystem::path(config.output.dir) / "checkpoint.h5").string();
  if (!std::filesystem::exists(path)) return "no checkpoint was written (output.checkpoint_every)";
  if (!verify) return fmt::format("the last complete checkpoint is kept; to continue: {}", to_restart);
  try {
    const io::CheckpointState last = io::read_checkpoint(path);
    return fmt::format("the last checkpoint, step {} (t = {:.6g}), reads back intact; to continue: {}", last.step,
                       last.time, to_restart);
  } catch (const std::exception& e) {
    return fmt::format("the checkpoint {} does not read back: {}", path, e.what());
  }
}

// This rank's planes of the checkpoint (its slab and ghost planes, each checked against its
// checksum). A damaged plane is found by the rank that reads it alone, so the ranks agree
// first: every rank then stops with the lowest failing rank's message (a deck-time error,
// exit 2, before anything is written).
template <class T>
io::CheckpointState read_own_planes(const io::CheckpointState& header, const ProblemSetup<T>& problem) {
  const SlabDecomposition& slab = problem.diffusion.slab;
  std::vector<int> planes(static_cast<std::size_t>(slab.local.n[2]));
  for (int k = 0; k < slab.local.n[2]; ++k) planes[static_cast<std::size_t>(k)] = slab.whole_plane(k);
  std::string failure;
  io::CheckpointState own;
  try {
    own = io::read_checkpoint(header.path, planes);
  } catch (const io::CheckpointError& e) {
    failure = e.what();
  }
  failure = first_failure(failure, problem.comm);
  if (!failure.empty()) throw io::CheckpointError(failure);
  return own;
}

// How long a failed distributed run waits for the writes already queued before it ends
// every rank: a checkpoint in flight normally lands in well under this; a write whose
// other ranks are gone never does.
constexpr double kWritesInFlightSeconds = 60;

// A heat run that failed while stepping (run_failure.hpp) ends with one line: the failure
// and what is left to continue from. The writes already queued finish first, so that a
// checkpoint in flight lands. On several ranks the others wait in the step's exchanges
// while their writers take part in those same collective writes (every rank queued the same
// snapshots before this step); then every rank ends (MPI_Abort) rather than unwinding.
template <class T>
[[noreturn]] void fail_heat_run(const RunFailure& failure, SnapshotPipeline<T>& outputs,
                                const io::RunConfig& config, const std::string& to_restart, MpiSession& mpi) {
  if (mpi.size() > 1) {
    try {
      if (!outputs.finish_within(kWritesInFlightSeconds))
        spdlog::warn("output: the writes queued before the failure did not finish in {:g} s", kWritesInFlightSeconds);
    } catch (const std::exception& e) {
      spdlog::warn("output: a write queued before the failure failed too: {}", e.what());
    }
    mpi.abort(kExitRuntime, std::string(failure.what()) + "; " + checkpoint_left(config, to_restart, false));
  }
  try {
    outputs.finish();
  } catch (const std::exception& e) {
    spdlog::warn("output: a write queued before the failure failed too: {}", e.what());
  }
  throw RunFailure(std::string(failure.what()) + "; " + checkpoint_left(config, to_restart, true));
}

template <class T>
int heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
         const Reporting& how, nlohmann::json& summary, const io::CheckpointState* restart,
         const std::string& to_restart, MpiSession& mpi) {
  std::printf("  heat: dt = %g, t_end = %g, theta = %g, %ld steps\n", config.dt, config.t_end,
              config.theta, step_count(config.t_end, config.dt));
  std::optional<HeatStart<T>> start;
  io::CheckpointState slab;  // this rank's planes of the checkpoint: its slab and ghost planes
  if (restart) {
    slab = read_own_planes(*restart, problem);
    start = HeatStart<T>{restart->step, restart->time, nullptr};
    if constexpr (std::is_same_v<T, float>) start->u = slab.u.f32.data();
    else start->u = slab.u.f64.data();
    std::printf("  restart from step %ld (t = %.17g)\n", restart->step, restart->time);
  }
  // Always made: a signal has the run write a checkpoint even where the deck asks for none.
  const std::unique_ptr<SnapshotPipeline<T>> outputs = SnapshotPipeline<T>::for_run(
      config, problem, restart ? std::optional<long>(restart->step) : std::nullopt);
  std::fflush(stdout);
  RunResult r;
  try {
    r = run_heat(config, problem, backend, how.interactive, outputs.get(), start ? &*start : nullptr);
  } catch (const RunFailure& failure) {
    fail_heat_run(failure, *outputs, config, to_restart, mpi);
  }
  const double rate =
      r.wall_seconds > 0 ? static_cast<double>(r.points) * static_cast<double>(r.steps) / r.wall_seconds : 0;
  std::printf("summary\n");
  std::printf("  steps        %ld (t = %g)\n", r.steps, r.t_final);
  std::printf("  wall time    %s (%.3g s)\n", format_duration(r.wall_seconds).c_str(), r.wall_seconds);
  std::printf("  throughput   %.4g Mpoints x steps / s\n", rate * 1e-6);
  // Which step ran: the fused passes are the fast path (fixed Dirichlet data, insulated
  // faces or fixed Neumann data, constant alpha or a field between Dirichlet faces, on the
  // GPU), so that a slow run says why it is slow.
  const long stepped = r.steps - (restart ? restart->step : 0);
  const std::string fused = problem.distributed() ? "rhs, x and y solves, partitioned z solve + update"
                                                  : "fused passes (rhs + x solve, y solve, z solve + update)";
  const std::string path = r.fused_steps == 0         ? "operation by operation (rhs, 3 line solves, update)"
                           : r.fused_steps == stepped ? fused
                                                      : fmt::format("{} on {} of {} steps", fused, r.fused_steps, stepped);
  std::printf("  step path    %s\n", path.c_str());
  summary.update({{"steps", r.steps},
                  {"fused_steps", r.fused_steps},
                  {"t_final", r.t_final},
                  {"wall_seconds", r.wall_seconds},
                  {"points_steps_per_second", rate}});
  print_errors(r.error, summary);
  if (!outputs->outputs().empty()) {
    for (const std::string& o : outputs->outputs()) std::printf("  output       %s\n", o.c_str());
    summary["outputs"] = outputs->outputs();
    // Stepping's time lost to a writer slower than the steps (the warning said when it began).
    const double waited = outputs->writer_wait_seconds();
    if (waited > 0) std::printf("  output wait  %.3g s (stepping waited for the snapshot writer)\n", waited);
    summary["output_wait_seconds"] = waited;
  }
  report_timings(how, r.timings, summary);
  if (r.stopped_by) {
    summary["stopped_by"] = signal_name(r.stopped_by);
    std::fflush(stdout);
    return stopped(r.stopped_by,
                   fmt::format("checkpoint at step {} (t = {:.6g}) written; to continue: {}", r.steps, r.t_final,
                               to_restart),
                   problem.root());
  }
  return kExitOk;
}

// "1:1.0e+00 5:7.7e-03 ...": at most a dozen entries of a residual history, evenly spread
// (at least `stride` apart), and the last.
std::string history_line(const std::vector<double>& history, std::size_t stride) {
  stride = std::max<std::size_t>({stride, 1, (history.size() + 11) / 12});
  std::string line;
  for (std::size_t k = 0; k + 1 < history.size(); k += stride) line += fmt::format(" {}:{:.1e}", k + 1, history[k]);
  if (!history.empty()) line += fmt::format(" {}:{:.1e}", history.size(), history.back());
  return line;
}

template <class T>
int poisson(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
            const Reporting& how, nlohmann::json& summary) {
  const double tol = poisson_tolerance(config, problem.diffusion, *problem.forcing);
  const io::PoissonMethod method = poisson_method(config, problem, backend);
  const bool spectral = method == io::PoissonMethod::spectral;
  const bool automatic = config.method == io::PoissonMethod::automatic;
  const auto preconditioned_by = [&] {
    return krylov_preconditioner(problem.diffusion, *problem.forcing, krylov_preconditioner_choice(config)) ==
                   KrylovPreconditioner::spectral
               ? "the direct solve of the plane-mean alpha"
               : "a cycle of ADI steps";
  };
  if (spectral)
    std::printf("  poisson: method spectral: one direct solve%s, tol = %g%s%s\n",
                config.method == io::PoissonMethod::automatic ? " (auto: the problem separates)" : "", tol,
                config.tol > 0 ? "" : " (the precision's default)",
                config.mixed ? ", mixed precision: solved in double" : "");
  else if (method == io::PoissonMethod::krylov)
    std::printf("  poisson: method krylov%s: conjugate gradients, preconditioned by %s%s, tol = %g%s, max_iter = %ld%s\n",
                automatic ? " (auto: alpha varies inside planes, on the CPU)" : "", preconditioned_by(),
                config.preconditioner == io::PreconditionerChoice::automatic ? " (auto)" : "", tol,
                config.tol > 0 ? "" : " (the precision's default)", config.max_iter,
                config.mixed ? ", mixed precision: solved in double" : "");
  else
    std::printf("  poisson: method adi%s, tol = %g%s, max_iter = %ld%s\n",
                automatic ? " (auto; conjugate gradients if it diverges)" : "", tol, config.tol > 0 ? "" : " (the precision's default)", config.max_iter,
                config.mixed ? ", mixed precision: float sweeps, double residual" : "");
  std::fflush(stdout);
  std::unique_ptr<SnapshotPipeline<T>> outputs;
  if (config.output.hdf5 || config.output.vtk) outputs = SnapshotPipeline<T>::for_run(config, problem);
  const PoissonResult r = run_poisson(config, problem, backend, how.interactive, outputs.get(), method);
  const PoissonReport& p = r.report;
  const bool krylov = std::string(p.method) == "krylov";
  if (r.abandoned)
    std::printf("  poisson: the ADI iteration diverged (relative residual %.3g after %ld iterations): conjugate "
                "gradients from the initial guess, preconditioned by %s\n",
                r.abandoned->relative_residual, r.abandoned->iterations, preconditioned_by());
  const std::string outcome = p.converged   ? "converged"
                              : p.stopped   ? "NOT converged, interrupted"
                              : p.stagnated ? "NOT converged, stagnated"
                                            : "NOT converged";
  std::printf("summary\n");
  if (spectral)
    std::printf("  method       spectral: one direct solve (%s), transforms planned in %.3g s\n", outcome.c_str(),
                p.setup_seconds);
  else if (krylov && !p.taus.empty())
    std::printf("  iterations   %ld conjugate gradients (%s), each preconditioned by a cycle of %zu ADI steps\n",
                p.iterations, outcome.c_str(), p.taus.size());
  else if (krylov)
    std::printf("  iterations   %ld conjugate gradients (%s)\n", p.iterations, outcome.c_str());
  else if (config.mixed)
    std::printf("  iterations   %ld float sweeps in %ld refinements (%s), ADI cycle of %zu parameters, lambda in "
                "[%.3g, %.3g]\n",
                p.iterations, p.refinements, outcome.c_str(), p.taus.size(), p.lambda_min, p.lambda_max);
  else
    std::printf("  iterations   %ld (%s), ADI cycle of %zu parameters, lambda in [%.3g, %.3g]\n", p.iterations,
                outcome.c_str(), p.taus.size(), p.lambda_min, p.lambda_max);
  std::printf("  residual     %.3e relative to the initial guess's\n", p.relative_residual);
  // The JSON summary has every entry.
  if (!spectral) std::printf("  history     %s\n", history_line(p.history, p.taus.size()).c_str());
  if (config.mixed && !spectral && !krylov)
    std::printf("  refinements %s\n", history_line(p.refinement_history, 1).c_str());
  if (p.source_shift != 0)
    std::printf("  compatibility  removed %.3e from f (discretisation mismatch of the data)\n", p.source_shift);
  std::printf("  wall time    %s (%.3g s)\n", format_duration(r.wall_seconds).c_str(), r.wall_seconds);
  const char* stop_reason = p.converged ? "tolerance" : p.stopped ? "signal" : p.stagnated ? "stagnated" : "max_iter";
  summary.update({{"method", p.method},
                  {"iterations", p.iterations},
                  {"converged", p.converged},
                  {"stop_reason", stop_reason},
                  {"tolerance", tol},
                  {"relative_residual", p.relative_residual},
                  {"residual_history", p.history},
                  {"adi_parameters", p.taus},
                  {"source_shift", p.source_shift},
                  {"wall_seconds", r.wall_seconds}});
  if (r.abandoned)
    summary["abandoned_adi"] = {{"iterations", r.abandoned->iterations},
                                {"relative_residual", r.abandoned->relative_residual}};
  if (config.mixed && !spectral)
    summary.update({{"refinements", p.refinements}, {"refinement_history", p.refinement_history}});
  print_errors(r.error, summary);
  if (outputs && !outputs->outputs().empty()) {
    for (const std::string& o : outputs->outputs()) std::printf("  output       %s\n", o.c_str());
    summary["outputs"] = outputs->outputs();
  }
  report_timings(how, r.timings, summary);
  const std::string written = outputs ? "the result is written" : "no output.formats: only summary.json is written";
  if (r.stopped_by) {
    summary["stopped_by"] = signal_name(r.stopped_by);
    std::fflush(stdout);
    return stopped(r.stopped_by,
                   fmt::format("Poisson iteration interrupted at iteration {} (relative residual {:.3e}); the "
                               "current iterate is written as the result{}; Poisson runs have no checkpoint "
                               "format, so a new run starts over",
                               p.iterations, p.relative_residual, outputs ? "" : " (no output.formats: nowhere)"),
                   problem.root());
  }
  if (!p.converged && p.stagnated) {
    // Rounding, not a fault: the result stands, and the line says what would go further.
    // An ADI iteration whose residual grew is no rounding: alpha's variation undoes it.
    const bool diverged = !spectral && !krylov && p.relative_residual > 1;
    std::string why;
    if (spectral)
      why = fmt::format("the direct solve is exact up to {}'s rounding, which this grid's condition amplifies to "
                        "that residual; ask for a larger solver.tol{}",
                        std::is_same_v<T, float> ? "float" : "double",
                        std::is_same_v<T, float> ? " or solver.precision = double" : "");
    else if (krylov)
      why = fmt::format("20 iterations without a 10% gain: {}'s rounding floor on this grid; ask for a larger "
                        "solver.tol{}",
                        std::is_same_v<T, float> ? "float" : "double",
                        std::is_same_v<T, float> ? " or solver.precision = double" : "");
    else if (diverged)
      why = "the ADI iteration can diverge where alpha varies strongly inside planes; solver.method = krylov (or "
            "auto) converges there";
    else if (std::is_same_v<T, float>)
      why = fmt::format("float's rounding floor on this grid (float's default solver.tol here, {:.1e}, is above it); "
                        "solver.precision = mixed (float sweeps, double residual) reaches double's tolerances",
                        default_tolerance(problem.diffusion, robin_h_ranges(problem.diffusion.whole_bc(), *problem.forcing)));
    else if (config.mixed)
      why = "a refinement gained less than half: double's rounding floor on this grid, or float sweeps too coarse "
            "for this problem (solver.precision = double then)";
    else
      why = "the rounding floor of double arithmetic on this grid; ask for a larger solver.tol";
    // The ADI iteration can stall far above rounding where alpha jumps inside a plane (a
    // stack with vias): conjugate gradients take those problems.
    const bool field = !problem.diffusion.alpha_field.empty() || problem.diffusion.backend_alpha;
    if (!spectral && !krylov && field && !diverged)
      why += "; where alpha varies strongly inside a plane, solver.method = krylov (or auto) converges";
    if (problem.root())
      std::fprintf(stderr,
                   "adi3d: warning: Poisson iteration %s at relative residual %.3e after %ld iterations, "
                   "above solver.tol = %g: %s; %s (exit %d)\n",
                   diverged ? "diverged" : "stagnated", p.relative_residual, p.iterations, tol, why.c_str(),
                   written.c_str(), kExitNotConverged);
    return kExitNotConverged;
  }
  if (!p.converged) {
    if (problem.root())
      std::fprintf(stderr,
                   "adi3d: error: Poisson iteration did not reach solver.tol = %g in solver.max_iter = %ld "
                   "iterations (relative residual %.3e); raise solver.max_iter or check the data; %s\n",
                   tol, config.max_iter, p.relative_residual, written.c_str());
    return kExitRuntime;
  }
  return kExitOk;
}

// Rank 0 makes the output directory; the others learn whether it could, so that a bad
// output.dir is the same deck error on every rank.
void prepare_output_dir_once(const io::Deck& deck, const std::string& dir, Communicator& comm) {
  std::string failure;
  if (comm.rank() == 0) {
    try {
      prepare_output_dir(deck, dir);
    } catch (const io::DeckError& e) {
      failure = e.what();
    }
  }
  if (comm.size() > 1) broadcast_string(failure, 0, &comm);
  if (!failure.empty()) throw io::DeckError(failure);
}

// One GPU per rank, by the rank's place on its node.
int device_for(const io::RunConfig& config, const MpiSession& mpi) {
  if (mpi.size() == 1 || config.backend == io::BackendChoice::cpu) return config.device;
  const int gpus = cuda_device_count();
  if (config.backend == io::BackendChoice::automatic && gpus == 0) return config.device;
  if (gpus == 0)
    throw BackendUnavailable(fmt::format("solver.backend = cuda, but this node has no usable GPU for its {} ranks; "
                                         "set solver.backend = cpu or auto", mpi.local_size()));
  if (gpus < mpi.local_size())
    throw BackendUnavailable(fmt::format("{} ranks run on this node but it has {} GPU{}: start at most {} ranks "
                                         "per node (one GPU each), or set solver.backend = cpu",
                                         mpi.local_size(), gpus, gpus == 1 ? "" : "s", gpus));
  return mpi.local_rank();
}

template <class T>
int run_typed(const io::Deck& deck, const io::RunConfig& config, Reporting how,
              const io::CheckpointState* restart, MpiSession& mpi, const std::string& to_restart) {
  ProblemSetup<T> problem = setup_problem<T>(deck, config, &mpi.world());
  if (config.problem == io::ProblemType::poisson && config.method == io::PoissonMethod::spectral &&
      problem.distributed())
    deck.fail("solver.method", fmt::format("the direct solve runs on one rank for now, and this run has {} (the "
                                           "design for split runs is in docs/scaling.md); use solver.method = adi or "
                                           "auto",
                                           mpi.size()));
  prepare_output_dir_once(deck, config.output.dir, mpi.world());

  // From here on, failures are runtime failures (exit 1), but for the diffusivity formula's
  // values, a deck error found where it is sampled (load_diffusivity).
  // u, the step's right-hand side, the exact solution for the error, a source and a
  // diffusivity field when present (face arrays are small).
  const bool alpha_field = !problem.diffusion.alpha_field.empty() || problem.diffusivity;
  // A direct Poisson solve adds its working memory on a GPU: the extension of each plane to
  // its period (about 4 values a point), the pivots (2) and on a periodic z Sherman-
  // Morrison's second solution (2). (A layered alpha field is known to separate only once
  // sampled; its solve's memory is then not in the preflight.)
  const bool direct = config.problem == io::ProblemType::poisson && config.method != io::PoissonMethod::adi &&
                      !problem.distributed() && !alpha_field && spectral_obstacle(config.bc, false).none();
  // A Krylov solve (auto's where alpha is a field: it may vary inside planes) adds its six
  // vectors and its preconditioner: the direct solve's working memory, or an ADI stepper's
  // source and right-hand side.
  const bool krylov = config.problem == io::ProblemType::poisson &&
                      (config.method == io::PoissonMethod::krylov ||
                       (config.method == io::PoissonMethod::automatic && alpha_field));
  const bool krylov_direct =
      krylov && krylov_preconditioner(problem.diffusion, *problem.forcing, krylov_preconditioner_choice(config)) ==
                    KrylovPreconditioner::spectral;
  const int direct_fields = config.bc.periodic(2) ? 8 : 6;
  const int fields = 3 + problem.forcing->has_source() + alpha_field + (direct || krylov_direct ? direct_fields : 0) +
                     (krylov ? (krylov_direct ? 6 : 8) : 0);
  const Grid3& local = problem.diffusion.grid;
  // The work, for auto's choice on one rank (ranks must all choose alike: several take the
  // GPU where there is one). A Poisson iteration costs about a step and a half; 40 of them.
  constexpr double kPoissonStepEquivalents = 60;
  const double steps = config.problem == io::ProblemType::heat ? std::ceil(config.t_end / config.dt - 1e-9)
                                                              : kPoissonStepEquivalents;
  const double point_steps = problem.distributed() ? 0.0 : static_cast<double>(local.size()) * steps;
  // A mixed solve adds its float half: the correction, the float step's source and
  // right-hand side, a float diffusivity field, and the float backend's scratch.
  const std::size_t device_bytes = estimate_bytes(local, fields, sizeof(T)) +
                                   (config.mixed ? estimate_bytes(local, 3 + alpha_field, sizeof(float)) : 0);
  std::unique_ptr<Backend<T>> backend =
      choose_backend<T>(config.backend, device_for(config, mpi), device_bytes, point_steps);
  if (problem.distributed())
    backend = std::make_unique<DistributedBackend<T>>(std::move(backend), problem.diffusion.slab, mpi.world());
  how.before.setup = seconds_since(how.start);
  const auto sampling = std::chrono::steady_clock::now();
  load_diffusivity(deck, problem, *backend);
  backend->synchronize();
  if (config.problem == io::ProblemType::poisson && config.method == io::PoissonMethod::spectral) {
    const SpectralObstacle obstacle = spectral_obstacle(problem.diffusion, *problem.forcing, *backend);
    if (!obstacle.none()) deck.fail("solver.method", obstacle.refusal());
  }
  if (config.problem == io::ProblemType::poisson && config.method == io::PoissonMethod::krylov) {
    const std::string obstacle =
        krylov_obstacle(problem.diffusion, *problem.forcing,
                        krylov_preconditioner(problem.diffusion, *problem.forcing, krylov_preconditioner_choice(config)));
    if (!obstacle.empty()) deck.fail("solver.preconditioner", obstacle);
  }
  how.before.initial = seconds_since(sampling);
  if (problem.diffusivity) how.before.compile = problem.diffusivity->compile_seconds();
  const Grid3& g = config.grid;
  std::printf("adi3d %s: %s\n", version_string().c_str(), config.deck_name.c_str());
  std::printf("  grid %d x %d x %d (%zu points), h = %.4g %.4g %.4g, %s, backend %s\n", g.n[0],
              g.n[1], g.n[2], g.size(), g.h[0], g.h[1], g.h[2], config.precision_name(),
              backend->description().c_str());
  if (problem.distributed())
    std::printf("  distributed  %d ranks, z slabs of %d-%d planes\n", mpi.size(), config.grid.n[2] / mpi.size(),
                (config.grid.n[2] + mpi.size() - 1) / mpi.size());
  nlohmann::json summary = {{"deck", config.deck_name},
                            {"version", version_string()},
                            {"problem", io::to_string(config.problem)},
                            {"backend", backend->description()},
                            {"precision", config.precision_name()},
                            {"grid", {g.n[0], g.n[1], g.n[2]}},
                            {"ranks", mpi.size()}};
  const int code = config.problem == io::ProblemType::heat
                       ? heat(config, problem, *backend, how, summary, restart, to_restart, mpi)
                       : poisson(config, problem, *backend, how, summary);
  const std::string path = (std::filesystem::path(config.output.dir) / "summary.json").string();
  if (problem.root()) io::write_text_atomically(path, summary.dump(2) + "\n");
  std::printf("  summary      %s\n", path.c_str());
  return code;
}

}  // namespace

int run_command(const std::vector<std::string>& args, MpiSession& mpi) {
  // Every rank runs the same deck; rank 0 alone prints (the others' stdout goes nowhere) and
  // reports the deck errors, which every rank finds alike.
  Reporting how;
  how.start = process_start();
  const bool root = mpi.rank() == 0;
  if (!root && !std::freopen("/dev/null", "w", stdout)) throw std::runtime_error("cannot silence stdout");
  auto report = [root](const std::string& line) {
    if (root) std::fprintf(stderr, "%s\n", line.c_str());
  };
  std::optional<DeckArguments> parsed;
  try {
    parsed = parse_deck_arguments("run", args, "Runs a deck: time stepping or a Poisson solve.", true);
  } catch (const boost::program_options::error& e) {
    report(fmt::format("adi3d run: {}", e.what()));
    return kExitUsage;
  }
  if (!parsed) return kExitOk;
  try {
    const io::Deck deck = io::Deck::load(parsed->deck, parsed->overrides);
    const io::RunConfig config = io::read_run_config(deck);
    how.interactive = root && !parsed->quiet && Progress::stderr_is_terminal();
    how.verbose = parsed->verbose;
    // A restart is checked against the deck before anything is written.
    std::optional<io::CheckpointState> restart;
    if (!parsed->restart.empty()) {
      if (config.problem != io::ProblemType::heat)
        throw io::CheckpointError(parsed->restart + ": --restart continues heat runs only");
      // u is read later, each rank its own planes, once the ranks' slabs are known.
      restart = io::read_checkpoint_header(parsed->restart);
      const std::string differs = io::checkpoint_mismatch(*restart, config.grid, config.precision);
      if (!differs.empty()) throw io::CheckpointError(parsed->restart + ": cannot restart: " + differs);
      // The step count must still mean time: the checkpoint has to lie on this deck's dt.
      const long steps = step_count(config.t_end, config.dt);
      const double expected_t =
          restart->step == steps ? config.t_end : static_cast<double>(restart->step) * config.dt;
      if (restart->step > steps || std::abs(restart->time - expected_t) > 1e-9 * std::max(1.0, expected_t))
        throw io::CheckpointError(fmt::format("{}: cannot restart: step {} at t = {} in the checkpoint does "
                                              "not lie on time.dt = {} of the deck",
                                              parsed->restart, restart->step, restart->time, config.dt));
    }
    const io::CheckpointState* from = restart ? &*restart : nullptr;
    const std::string to_restart = restart_command(
        *parsed, mpi.size(), (std::filesystem::path(config.output.dir) / "checkpoint.h5").string());
    // SIGTERM and SIGINT stop the run at a step boundary (stop_signals.hpp; installed in
    // main, or here where run_command is called otherwise, as by the tests).
    install_stop_handlers();
    try {
      return config.precision == io::Precision::f64
                 ? run_typed<double>(deck, config, how, from, mpi, to_restart)
                 : run_typed<float>(deck, config, how, from, mpi, to_restart);
    } catch (const physics::NonFiniteFormula& e) {
      // Found while running, but the deck's fault: a deck error at the formula's line.
      deck.fail(e.sample().key, physics::describe(e.sample()));
    }
  } catch (const FieldNotFinite& e) {
    // Every rank found it at the same check (finite_check.hpp).
    report(fmt::format("adi3d: error: {}", e.what()));
    return kExitRuntime;
  } catch (const io::CheckpointError& e) {
    report(fmt::format("adi3d: {}", e.what()));
    return kExitUsage;
  } catch (const io::DeckError& e) {
    report(fmt::format("adi3d: {}", e.what()));
    return kExitUsage;
  } catch (const IncompatibleData& e) {
    report(fmt::format("adi3d: {}: source.f and the boundary data: {}", parsed->deck, e.what()));
    return kExitUsage;
  } catch (const BackendUnavailable& e) {
    // No usable GPU: every rank of the node finds the same.
    report(fmt::format("adi3d: error: {}", e.what()));
    return kExitRuntime;
  }
}

}  // namespace adi3d::app
