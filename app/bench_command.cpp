// adi3d bench KIND [--sizes ...] [--repetitions N] [--json FILE]
#include "app/bench.hpp"
#include "app/commands.hpp"
#include "io/snapshot_files.hpp"

#include <boost/program_options.hpp>
#include <unistd.h>

#include <ctime>
#include <iostream>

namespace po = boost::program_options;

namespace adi3d::app {

void write_bench_json(const BenchOptions& options, const std::string& benchmark, const nlohmann::json& payload) {
  if (options.json_path.empty()) return;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json out = {{"benchmark", benchmark},
                        {"date", date},
                        {"host", host},
                        {"version", version_string()},
                        {"command", options.command_line}};
  out.update(payload);
  io::write_text_atomically(options.json_path, out.dump(2) + "\n");
}

int bench_command(const std::vector<std::string>& args, MpiSession& mpi) {
  if (!args.empty() && args.front() == "scaling")  // every rank of an mpirun
    return bench_scaling(std::vector<std::string>(args.begin() + 1, args.end()), mpi);
  if (!args.empty() && args.front() == "tridiag")  // its own options (--tune, --precision, ...)
    return bench_tridiag(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args.front() == "adi")  // its own options (--parts, --solve-sizes, ...)
    return bench_adi(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args.front() == "output")  // its own options (--n, --dir, --compression, ...)
    return bench_output(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args.front() == "poisson")  // its own options (--precisions, --backend, ...)
    return bench_poisson(std::vector<std::string>(args.begin() + 1, args.end()));
  BenchOptions options;
  std::string kind;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "sizes", po::value<std::vector<int>>(&options.sizes)->multitoken(), "grid sizes n (n^3 points)")(
      "repetitions", po::value<int>(&options.repetitions)->default_value(5), "timed repetitions (median)")(
      "json", po::value<std::string>(&options.json_path), "write results as JSON to this file");
  po::options_description all;
  all.add(visible).add_options()("kind", po::value<std::string>(&kind));
  po::positional_options_description positional;
  positional.add("kind", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help") || kind.empty()) {
      std::cout << "usage: adi3d bench KIND [options]\n\nkinds:\n  cpu   Douglas step on the CPU vs LAPACK "
                   "dgtsv line solves\n  gpu   CUDA kernels (stencils, line solves, Douglas step) vs a device copy\n"
                   "  tridiag  batched tridiagonal library vs cuSPARSE (adi3d bench tridiag --help)\n"
                   "  adi   our Douglas step vs cuSPARSE and explicit, time to solution, scaling, Poisson\n"
                   "        (adi3d bench adi --help)\n"
                   "  poisson  a Poisson deck in double, float and mixed precision: time, iterations, errors\n"
                   "        (adi3d bench poisson --help)\n"
                   "  output   a snapshot through the pipeline vs the disk's sequential write + fsync\n"
                   "        (adi3d bench output --help)\n"
                   "  scaling  distributed step, weak or strong, under mpirun (adi3d bench scaling --help)\n\n"
                << visible;
      return vm.count("help") ? kExitOk : kExitUsage;
    }
    if (options.repetitions < 1) throw po::error("--repetitions must be >= 1");
    for (int n : options.sizes)
      if (n < 3) throw po::error("--sizes must be >= 3");
  } catch (const po::error& e) {
    std::cerr << "adi3d bench: " << e.what() << "\n";
    return kExitUsage;
  }
  options.command_line = "adi3d bench";
  for (const std::string& a : args) options.command_line += " " + a;
  if (kind == "cpu") {
    if (options.sizes.empty()) options.sizes = {128, 256};
    return bench_cpu(options);
  }
  if (kind == "gpu") {
    if (options.sizes.empty()) options.sizes = {256, 512};
    return bench_gpu(options);
  }
  std::cerr << "adi3d bench: unknown kind '" << kind << "' (expected: cpu, gpu, tridiag, adi, poisson, output, scaling)\n";
  return kExitUsage;
}

}  // namespace adi3d::app
