// adi3d bench tridiag: the batched tridiagonal library (solvers/tridiag) on the paper's
// workloads against cuSPARSE and, on a subset, the CPU solver against LAPACK dgtsv. The
// measurement itself lives in the library (tridiag_bench.hpp); this file parses options,
// prints and writes the JSON.
#include "app/bench.hpp"
#include "app/commands.hpp"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_bench.hpp"
#include "solvers/tridiag/tuning_file.hpp"

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace adi3d::app {

int bench_tridiag(const std::vector<std::string>& args) {
  tridiag::BenchConfig config;
  BenchOptions options;
  bool no_cpu = false;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "json", po::value<std::string>(&options.json_path), "write results as JSON to this file")(
      "tune", po::value<std::string>(&config.tune_path),
      "tune for this device first and store the policies in this tuning file (rows 'ours-tuned')")(
      "tuning", po::value<std::string>(&config.tuning_path), "read tuned policies from this tuning file")(
      "repetitions", po::value<int>(&config.repetitions)->default_value(15),
      "timed repetitions per row (median; at least 10 are run)")(
      "precision", po::value<std::string>(&config.precision)->default_value("both"), "float, double or both")(
      "no-cpu", po::bool_switch(&no_cpu), "skip the CPU solver and LAPACK rows")(
      "quick", po::bool_switch(&config.quick), "two small workloads only");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: adi3d bench tridiag [options]\n\n"
                   "Batched tridiagonal solver (ours: default, static and tuned policies) vs cuSPARSE\n"
                   "gtsv2StridedBatch / gtsv2_nopivot, and the CPU solver vs LAPACK dgtsv. Needs CUDA.\n\n"
                << visible;
      return kExitOk;
    }
    if (config.precision != "float" && config.precision != "double" && config.precision != "both")
      throw po::error("--precision must be float, double or both");
    if (config.repetitions < 1) throw po::error("--repetitions must be >= 1");
  } catch (const po::error& e) {
    std::cerr << "adi3d bench tridiag: " << e.what() << "\n";
    return kExitUsage;
  }
  config.cpu = !no_cpu;
  if (!tridiag::cuda_compiled()) {
    std::cerr << "adi3d bench tridiag: needs CUDA: this adi3d was built without it (configure with -DADI3D_CUDA=ON)\n";
    return kExitRuntime;
  }
  if (!tridiag::cuda_available()) {
    std::cerr << "adi3d bench tridiag: needs a CUDA device, and none is visible\n";
    return kExitRuntime;
  }
  options.command_line = "adi3d bench tridiag";
  for (const std::string& a : args) options.command_line += " " + a;
  const tridiag::BenchReport report = tridiag::run_bench(config);
  nlohmann::json rows = nlohmann::json::array();
  for (const tridiag::BenchRow& r : report.rows) {
    nlohmann::json j{{"workload", r.workload},       {"count", r.count},
                     {"n", r.n},                     {"precision", r.precision},
                     {"solver", r.solver},           {"time_ms", r.time_ms},
                     {"gpoints_per_s", r.gpoints_per_s}, {"effective_gbs", r.effective_gbs},
                     {"pct_copy_bw", r.pct_copy_bw}, {"rel_residual", r.rel_residual}};
    if (!r.policy.empty()) j["policy"] = r.policy;
    rows.push_back(j);
  }
  write_bench_json(options, "tridiag",
                   {{"device", report.device},
                    {"sms", report.sms},
                    {"copy_bandwidth_gbs", report.copy_gbs},
                    {"bytes_floor", "5 arrays per equation (a, b, c, d read; x written)"},
                    {"timing", "median of >= 10 runs after 3 warm-up runs, CUDA events; d restored before each "
                               "run, untimed"},
                    {"rows", rows}});
  return kExitOk;
}

}  // namespace adi3d::app
