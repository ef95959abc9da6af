// adi3d bench poisson: a Poisson deck solved as `adi3d run` solves it, by the ADI iteration,
// the direct (spectral) solve and conjugate gradients (krylov, with either preconditioner),
// in double, float and mixed precision, at each size:
// wall time (median of the repetitions, the solve alone: set-up, sampling and the error
// check are outside; a direct solve's includes planning its transforms, also given apart
// as "setup s", and "solve s" is the direct solve without its set-up: the residual before,
// the solve, the residual after; CG's set-up is its stepper, preconditioner and arrays),
// iterations (mixed: float sweeps and refinements), the relative residual reached and the
// error against the deck's exact solution. Float runs at its default tolerance, the one it
// reaches; double and mixed at --tol. The direct solve and CG have no mixed row (mixed
// solves them in double). On the CPU at small sizes it checks the path; on a GPU it gives
// issue 39's and issue 45's tables.
#include "app/bench.hpp"
#include "app/commands.hpp"
#include "app/poisson_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"
#include "solvers/spectral_solve.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>

namespace po = boost::program_options;

namespace adi3d::app {
namespace {

template <class T>
nlohmann::json solve_row(const io::Deck& deck, const io::RunConfig& config, BackendKind kind, int repetitions) {
  ProblemSetup<T> problem = setup_problem<T>(deck, config);
  const std::unique_ptr<Backend<T>> backend =
      kind == BackendKind::cuda ? make_cuda_backend<T>(0) : make_cpu_backend<T>();
  load_diffusivity(deck, problem, *backend);
  // auto's choice once, as `adi3d run` makes it before its solve (it may read the alpha
  // field back from the device).
  const io::PoissonMethod method = poisson_method(config, problem, *backend);
  std::vector<PoissonResult> solves;
  std::vector<double> walls, solve_walls;
  for (int r = 0; r < repetitions; ++r) {
    solves.push_back(run_poisson<T>(config, problem, *backend, false, nullptr, method));
    walls.push_back(solves.back().wall_seconds);
    solve_walls.push_back(solves.back().report.solve_seconds);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double wall = median(walls);
  const PoissonResult& last = solves.back();
  const PoissonReport& p = last.report;
  nlohmann::json row{{"n", config.grid.n[0]},
                     {"precision", config.precision_name()},
                     {"backend", backend->description()},
                     {"solved_by", p.method},
                     {"tolerance", last.tolerance},
                     {"iterations", p.iterations},
                     {"wall_s", wall},
                     {"wall_s_runs", walls},
                     {"setup_s", p.setup_seconds},
                     {"solve_s", median(solve_walls)},
                     {"ms_per_iteration", wall * 1e3 / static_cast<double>(std::max<long>(1, p.iterations))},
                     {"relative_residual", p.relative_residual},
                     {"converged", p.converged},
                     {"stagnated", p.stagnated},
                     {"parameters_per_cycle", p.taus.size()}};
  if (last.abandoned) row["abandoned_adi_iterations"] = last.abandoned->iterations;
  if (config.mixed) row.update({{"refinements", p.refinements}, {"refinement_history", p.refinement_history}});
  if (last.error) row.update({{"l2_error_vs_exact", last.error->l2}, {"max_error_vs_exact", last.error->max}});
  return row;
}

}  // namespace

nlohmann::json poisson_solve_row(const std::string& deck_path, int n, const std::string& precision, double tol,
                                 BackendKind kind, int repetitions, const std::string& method) {
  // krylov:adi and krylov:spectral name the preconditioner too.
  const std::size_t colon = method.find(':');
  std::vector<std::string> sets{"grid.n=" + std::to_string(n), "solver.precision=" + precision,
                                "solver.method=" + method.substr(0, colon),
                                std::string("solver.backend=") + (kind == BackendKind::cuda ? "cuda" : "cpu"),
                                "solver.max_iter=10000"};
  if (colon != std::string::npos) sets.push_back("solver.preconditioner=" + method.substr(colon + 1));
  // No tol: the precision's default, whatever the deck asks (1e-5 only passes its checks).
  sets.push_back(fmt::format("solver.tol={:.17g}", tol > 0 ? tol : 1e-5));
  const io::Deck deck = io::Deck::load(deck_path, sets);
  io::RunConfig config = io::read_run_config(deck);
  if (tol <= 0) config.tol = 0;
  if (config.problem != io::ProblemType::poisson) throw std::runtime_error(deck_path + ": not a Poisson deck");
  nlohmann::json row = config.precision == io::Precision::f64 ? solve_row<double>(deck, config, kind, repetitions)
                                                              : solve_row<float>(deck, config, kind, repetitions);
  row["deck"] = deck_path;
  row["method"] = method;
  return row;
}

int bench_poisson(const std::vector<std::string>& args) {
  BenchOptions options;
  std::string deck, backend;
  std::vector<std::string> precisions, methods;
  double tol = 0;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "deck", po::value<std::string>(&deck)->default_value("inputs/poisson_dirichlet.ini"),
      "the Poisson deck (its [check] exact gives the errors)")(
      "sizes", po::value<std::vector<int>>(&options.sizes)->multitoken(), "nodes per axis (default 257 512)")(
      "precisions", po::value<std::vector<std::string>>(&precisions)->multitoken(),
      "any of: double float mixed (default: all three)")(
      "methods", po::value<std::vector<std::string>>(&methods)->multitoken(),
      "any of: auto adi spectral krylov krylov:adi krylov:spectral (default: adi and spectral where the deck "
      "separates, else adi and krylov)")(
      "tol", po::value<double>(&tol)->default_value(1e-10),
      "relative residual for double and mixed (float takes its default, which it reaches)")(
      "backend", po::value<std::string>(&backend)->default_value("cuda"), "cuda or cpu")(
      "repetitions", po::value<int>(&options.repetitions)->default_value(3), "solves of each (median wall time)")(
      "json", po::value<std::string>(&options.json_path), "write results as JSON to this file");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: adi3d bench poisson [options]\n\n"
                   "A Poisson deck solved as adi3d run solves it, by the ADI iteration, the direct (spectral)\n"
                   "solve or conjugate gradients (krylov), in double, float and mixed precision (float sweeps,\n"
                   "double residual), at\n"
                   "each size: median wall time of the solve, iterations (mixed: float sweeps in refinements),\n"
                   "the relative residual and the error against the exact solution. Run from the repository\n"
                   "root (the default deck is read from inputs/).\n\n"
                << visible;
      return kExitOk;
    }
    if (options.sizes.empty()) options.sizes = {257, 512};
    if (precisions.empty()) precisions = {"double", "float", "mixed"};
    for (const std::string& p : precisions)
      if (p != "double" && p != "float" && p != "mixed") throw po::error("--precisions takes double, float, mixed");
    const std::vector<std::string> known{"auto", "adi", "spectral", "krylov", "krylov:adi", "krylov:spectral"};
    for (const std::string& m : methods)
      if (std::find(known.begin(), known.end(), m) == known.end())
        throw po::error("--methods takes auto, adi, spectral, krylov, krylov:adi, krylov:spectral");
    for (int n : options.sizes)
      if (n < 3) throw po::error("--sizes must be >= 3");
    if (backend != "cuda" && backend != "cpu") throw po::error("--backend must be cuda or cpu");
    if (!(tol > 0 && tol < 1)) throw po::error("--tol must lie in (0, 1)");
    if (options.repetitions < 1) throw po::error("--repetitions must be >= 1");
  } catch (const po::error& e) {
    std::cerr << "adi3d bench poisson: " << e.what() << "\n";
    return kExitUsage;
  }
  const BackendKind kind = backend == "cuda" ? BackendKind::cuda : BackendKind::cpu;
  if (kind == BackendKind::cuda && cuda_device_count() == 0) {
    std::cerr << "adi3d bench poisson: --backend cuda needs a CUDA device: " << cuda_device_summary()
              << " (--backend cpu runs on the CPU)\n";
    return kExitRuntime;
  }
  options.command_line = "adi3d bench poisson";
  for (const std::string& a : args) options.command_line += " " + a;

  // By default the direct solve where the deck's faces let it (a field that varies inside
  // planes is then refused on its row), else conjugate gradients; asked for where it does
  // not apply, the row says why.
  if (methods.empty()) {
    const io::RunConfig probe = io::read_run_config(io::Deck::load(deck, {}));
    const bool separates = spectral_obstacle(probe.bc, false).none();
    methods = {"adi", separates ? "spectral" : "krylov"};
  }
  std::printf("Poisson: %s, %s backend, double and mixed to relative residual %g, float to its default\n",
              deck.c_str(), backend.c_str(), tol);
  std::printf("%5s %-15s %-7s %9s %8s %10s %9s %9s %9s %11s %11s %11s %8s\n", "n", "method", "prec", "tol", "iters",
              "refinements", "wall s", "setup s", "solve s", "residual", "L2 error", "max error", "vs adi");
  nlohmann::json rows = nlohmann::json::array();
  for (int n : options.sizes) {
    std::map<std::string, double> double_wall;  // by method
    for (const std::string& precision : precisions) {
      double adi_wall = 0;
      for (const std::string& method : methods) {
        if (method != "adi" && precision == "mixed") continue;  // mixed solves these in double
        nlohmann::json row;
        try {
          row = poisson_solve_row(deck, n, precision, precision == "float" ? 0.0 : tol, kind, options.repetitions,
                                  method);
        } catch (const std::invalid_argument& e) {  // a diffusivity field that is not one of z alone
          std::printf("%5d %-15s %-7s %s\n", n, method.c_str(), precision.c_str(), e.what());
          continue;
        }
        const double wall = row["wall_s"].get<double>();
        if (method == "adi") adi_wall = wall;
        if (adi_wall > 0 && method != "adi") row["speedup_vs_adi"] = adi_wall / wall;
        if (precision == "double") double_wall[method] = wall;
        if (double_wall.count(method) && precision != "double") row["speedup_vs_double"] = double_wall[method] / wall;
        const std::string refinements = row.contains("refinements") ? row["refinements"].dump() : "-";
        const std::string speedup =
            row.contains("speedup_vs_adi") ? fmt::format("{:.1f}x", row["speedup_vs_adi"].get<double>()) : "";
        std::printf("%5d %-15s %-7s %9.1e %8ld %10s %9.4f %9.4f %9.4f %11.2e %11.3e %11.3e %8s%s\n", n,
                    method.c_str(), precision.c_str(), row["tolerance"].get<double>(), row["iterations"].get<long>(),
                    refinements.c_str(), wall, row["setup_s"].get<double>(), row["solve_s"].get<double>(),
                    row["relative_residual"].get<double>(),
                    row.value("l2_error_vs_exact", -1.0), row.value("max_error_vs_exact", -1.0), speedup.c_str(),
                    row["converged"].get<bool>() ? "" : "  NOT converged");
        std::fflush(stdout);
        rows.push_back(std::move(row));
      }
    }
  }
  const std::string timing = "wall clock around the solve (run_poisson's wall_seconds, the device synchronised); "
                             "median of " + std::to_string(options.repetitions) +
                             " solves of the same problem from the same guess; set-up, sampling, auto's choice of "
                             "method and the error check not included";
  const nlohmann::json payload{{"device", kind == BackendKind::cuda ? cuda_device_summary() : std::string("cpu")},
                               {"timing", timing},
                               {"rows", rows}};
  write_bench_json(options, "poisson", payload);
  return kExitOk;
}

}  // namespace adi3d::app
