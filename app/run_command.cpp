// adi3d run DECK: validate, set up, run, summarise.
#include "app/backend_choice.hpp"
#include "app/command_line.hpp"
#include "app/commands.hpp"
#include "app/heat_run.hpp"
#include "app/output_dir.hpp"
#include "app/poisson_run.hpp"
#include "app/problem_setup.hpp"
#include "app/progress.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

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

template <class T>
int heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
         bool interactive, nlohmann::json& summary) {
  std::printf("  heat: dt = %g, t_end = %g, theta = %g, %ld steps\n", config.dt, config.t_end,
              config.theta, step_count(config.t_end, config.dt));
  std::fflush(stdout);
  const RunResult r = run_heat(config, problem, backend, interactive);
  const double rate =
      r.wall_seconds > 0 ? static_cast<double>(r.points) * static_cast<double>(r.steps) / r.wall_seconds : 0;
  std::printf("summary\n");
  std::printf("  steps        %ld (t = %g)\n", r.steps, r.t_final);
  std::printf("  wall time    %s (%.3g s)\n", format_duration(r.wall_seconds).c_str(), r.wall_seconds);
  std::printf("  throughput   %.4g Mpoints x steps / s\n", rate * 1e-6);
  summary.update({{"steps", r.steps},
                  {"t_final", r.t_final},
                  {"wall_seconds", r.wall_seconds},
                  {"points_steps_per_second", rate}});
  print_errors(r.error, summary);
  return kExitOk;
}

template <class T>
int poisson(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
            bool interactive, nlohmann::json& summary) {
  std::printf("  poisson: tol = %g, max_iter = %ld\n", config.tolerance(), config.max_iter);
  std::fflush(stdout);
  const PoissonResult r = run_poisson(config, problem, backend, interactive);
  const PoissonReport& p = r.report;
  std::printf("summary\n");
  std::printf("  iterations   %ld (%s), ADI cycle of %zu parameters, lambda in [%.3g, %.3g]\n",
              p.iterations, p.converged ? "converged" : "NOT converged", p.taus.size(), p.lambda_min,
              p.lambda_max);
  std::printf("  residual     %.3e relative to the initial guess's\n", p.relative_residual);
  std::printf("  history     ");
  for (std::size_t k = 0; k < p.history.size(); k += p.taus.size())
    std::printf(" %zu:%.1e", k + 1, p.history[k]);
  std::printf(" %zu:%.1e\n", p.history.size(), p.history.empty() ? 0.0 : p.history.back());
  if (p.source_shift != 0)
    std::printf("  compatibility  removed %.3e from f (discretisation mismatch of the data)\n", p.source_shift);
  std::printf("  wall time    %s (%.3g s)\n", format_duration(r.wall_seconds).c_str(), r.wall_seconds);
  summary.update({{"iterations", p.iterations},
                  {"converged", p.converged},
                  {"relative_residual", p.relative_residual},
                  {"residual_history", p.history},
                  {"adi_parameters", p.taus},
                  {"source_shift", p.source_shift},
                  {"wall_seconds", r.wall_seconds}});
  print_errors(r.error, summary);
  if (!p.converged) {
    std::fprintf(stderr,
                 "adi3d: error: Poisson iteration did not reach solver.tol = %g in solver.max_iter = %ld "
                 "iterations (relative residual %.3e); raise solver.max_iter or check the data\n",
                 config.tolerance(), config.max_iter, p.relative_residual);
    return kExitRuntime;
  }
  return kExitOk;
}

template <class T>
int run_typed(const io::Deck& deck, const io::RunConfig& config, bool interactive) {
  ProblemSetup<T> problem = setup_problem<T>(deck, config);
  prepare_output_dir(deck, config.output.dir);

  // From here on, failures are runtime failures (exit 1).
  std::unique_ptr<Backend<T>> backend = choose_backend<T>(config.backend, config.device);
  const Grid3& g = config.grid;
  std::printf("adi3d %s: %s\n", version_string().c_str(), config.deck_name.c_str());
  std::printf("  grid %d x %d x %d (%zu points), h = %.4g %.4g %.4g, %s, backend %s\n", g.n[0],
              g.n[1], g.n[2], g.size(), g.h[0], g.h[1], g.h[2], io::to_string(config.precision),
              backend->description().c_str());
  nlohmann::json summary = {{"deck", config.deck_name},
                            {"version", version_string()},
                            {"problem", io::to_string(config.problem)},
                            {"backend", backend->description()},
                            {"precision", io::to_string(config.precision)},
                            {"grid", {g.n[0], g.n[1], g.n[2]}}};
  const int code = config.problem == io::ProblemType::heat
                       ? heat(config, problem, *backend, interactive, summary)
                       : poisson(config, problem, *backend, interactive, summary);
  const std::string path = (std::filesystem::path(config.output.dir) / "summary.json").string();
  write_file_atomically(path, summary.dump(2) + "\n");
  std::printf("  summary      %s\n", path.c_str());
  return code;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  std::optional<DeckArguments> parsed;
  try {
    parsed = parse_deck_arguments("run", args, "Runs a deck: time stepping or a Poisson solve.", true);
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "adi3d run: %s\n", e.what());
    return kExitUsage;
  }
  if (!parsed) return kExitOk;
  try {
    const io::Deck deck = io::Deck::load(parsed->deck, parsed->overrides);
    const io::RunConfig config = io::read_run_config(deck);
    const bool interactive = !parsed->quiet && Progress::stderr_is_terminal();
    return config.precision == io::Precision::f64 ? run_typed<double>(deck, config, interactive)
                                                  : run_typed<float>(deck, config, interactive);
  } catch (const io::DeckError& e) {
    std::fprintf(stderr, "adi3d: %s\n", e.what());
    return kExitUsage;
  } catch (const IncompatibleData& e) {
    std::fprintf(stderr, "adi3d: %s: source.f and the boundary data: %s\n", parsed->deck.c_str(), e.what());
    return kExitUsage;
  }
}

}  // namespace adi3d::app
