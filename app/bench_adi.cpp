// adi3d bench adi [options]: options, the parts in order, and the JSON (date, device,
// command, copy bandwidth, every row). The parts live in bench_adi_*.cpp.
#include "app/bench_adi.hpp"

#include "app/bench.hpp"
#include "app/commands.hpp"
#include "solvers/backend.hpp"
#include "solvers/bench/adi_bench.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

namespace po = boost::program_options;

namespace adi3d::app {
namespace {

bool wants(const AdiBenchConfig& c, const std::string& part) {
  return std::find(c.parts.begin(), c.parts.end(), part) != c.parts.end();
}

}  // namespace

int bench_adi(const std::vector<std::string>& args) {
  AdiBenchConfig config;
  BenchOptions options;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "json", po::value<std::string>(&options.json_path), "write results as JSON to this file")(
      "parts", po::value<std::vector<std::string>>(&config.parts)->multitoken(),
      "any of: steps scaling heat poisson (default: all)")(
      "sizes", po::value<std::vector<int>>(&config.step_sizes)->multitoken(),
      "steps: grid sizes n (default 256 512)")(
      "precision", po::value<std::string>(&config.step_precision)->default_value("both"),
      "steps: float, double or both")(
      "repetitions", po::value<int>(&config.repetitions)->default_value(20), "timed repetitions (median)")(
      "scaling-sizes", po::value<std::vector<int>>(&config.scaling_sizes)->multitoken(),
      "scaling: grid sizes n (default 64 128 256 384 512 640 768 1024)")(
      "solve-sizes", po::value<std::vector<int>>(&config.solve_sizes)->multitoken(),
      "heat: grid sizes n (default 256 512)")(
      "tolerance", po::value<double>(&config.tolerance)->default_value(1e-4),
      "heat: max error at t_end that ADI and explicit must meet")(
      "explicit-max-seconds", po::value<double>(&config.explicit_max_seconds)->default_value(60),
      "heat: an explicit solve projected to take longer runs a fraction and reports a projection")(
      "heat-deck", po::value<std::string>(&config.heat_deck)->default_value("inputs/heat_sine.ini"),
      "heat: the deck (needs [check] exact)")(
      "poisson-n", po::value<int>(&config.poisson_n)->default_value(257), "poisson: nodes per axis")(
      "poisson-tol", po::value<double>(&config.poisson_tol)->default_value(1e-8),
      "poisson: relative residual to reach")(
      "poisson-deck", po::value<std::string>(&config.poisson_deck)->default_value("inputs/poisson_dirichlet.ini"),
      "poisson: the deck");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: adi3d bench adi [options]\n\n"
                   "Our Douglas step vs a cuSPARSE Douglas step (gtsv2StridedBatch, gtsvInterleavedBatch) and an\n"
                   "explicit FTCS step, against the bytes floor and a device copy measured in the same run;\n"
                   "time to solution of the heat_sine deck (ADI at the largest dt meeting --tolerance vs\n"
                   "explicit at its stability limit); ns per point per step with n; the Poisson deck to\n"
                   "--poisson-tol. Needs CUDA. Run from the repository root (the decks are read from inputs/).\n\n"
                << visible;
      return kExitOk;
    }
    for (const std::string& p : config.parts)
      if (p != "steps" && p != "scaling" && p != "heat" && p != "poisson")
        throw po::error("--parts takes steps, scaling, heat, poisson");
    if (config.step_precision != "float" && config.step_precision != "double" && config.step_precision != "both")
      throw po::error("--precision must be float, double or both");
    if (config.repetitions < 1) throw po::error("--repetitions must be >= 1");
    for (const auto* sizes : {&config.step_sizes, &config.scaling_sizes, &config.solve_sizes})
      for (int n : *sizes)
        if (n < 3) throw po::error("sizes must be >= 3");
    if (config.poisson_n < 3) throw po::error("--poisson-n must be >= 3");
    if (!(config.tolerance > 0) || !(config.poisson_tol > 0)) throw po::error("tolerances must be > 0");
  } catch (const po::error& e) {
    std::cerr << "adi3d bench adi: " << e.what() << "\n";
    return kExitUsage;
  }
  if (cuda_device_count() == 0) {
    std::cerr << "adi3d bench adi: needs a CUDA device: " << cuda_device_summary() << "\n";
    return kExitRuntime;
  }
  options.command_line = "adi3d bench adi";
  for (const std::string& a : args) options.command_line += " " + a;
  std::cout << cuda_device_summary() << "\n";

  nlohmann::json payload = {{"device", cuda_device_summary()},
                            {"timing", "CUDA events on the backend's stream; median of " +
                                           std::to_string(config.repetitions) + " timings (copies: at least 50) of " +
                                           std::to_string(cuda::kCallsPerTiming) +
                                           " calls back to back, per call, after warm-up; steps start from "
                                           "fresh random data in [0.5, 1.5); solves time the step loop only"}};
  double copy_gbs = 0;
  if (wants(config, "steps")) payload["steps"] = adi_step_rows(config, copy_gbs);
  if (copy_gbs > 0) payload["copy_bandwidth_gbs"] = copy_gbs;
  if (wants(config, "scaling")) payload["scaling"] = adi_scaling_rows(config);
  if (wants(config, "heat")) payload["time_to_solution"] = adi_heat_rows(config);
  if (wants(config, "poisson")) payload["poisson"] = adi_poisson(config);
  payload["bytes_floor"] = {{"douglas_step", "7 arrays per point: rhs with the x solve reads u and writes du; "
                                             "the y solve reads and writes du; the z solve with the update reads "
                                             "du and u and writes u"},
                            {"ftcs_step", "2 arrays per point: u read, u_new written"},
                            {"copy", "2 arrays per point: read and write"}};
  write_bench_json(options, "adi", payload);
  return kExitOk;
}

}  // namespace adi3d::app
