// adi3d: ADI solvers for the 3D heat and Poisson equations.
#include "app/commands.hpp"
#include "app/run_timings.hpp"
#include "app/stop_signals.hpp"
#include "solvers/distributed/mpi_session.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: adi3d <command> [options]\n"
    "\n"
    "commands:\n"
    "  run DECK      run the deck (heat time stepping or Poisson solve)\n"
    "  check DECK    validate the deck without running\n"
    "  info          version, build options and CUDA devices\n"
    "  bench KIND    benchmarks (adi3d bench --help)\n"
    "  tune          tune the tridiagonal solver for this GPU (adi3d tune --help)\n"
    "\n"
    "options:\n"
    "  --help        this text; 'adi3d <command> --help' for a command's options\n"
    "  --version     print the version and the commit it was built from\n";

}  // namespace

int main(int argc, char** argv) {
  adi3d::app::process_start();  // the clock of `adi3d run --verbose`'s set-up time
  // A run takes SIGTERM and SIGINT from its first moment (a scheduler may send one while
  // it starts): the run stops at its first step boundary with a checkpoint.
  if (argc > 1 && std::strcmp(argv[1], "run") == 0) adi3d::app::install_stop_handlers();
  spdlog::set_pattern("[%H:%M:%S] %^%l%$: %v");
  // MPI starts first and ends last (mpirun -np P adi3d run DECK); a build without MPI
  // refuses to be one of several ranks.
  std::unique_ptr<adi3d::MpiSession> mpi;
  try {
    mpi = std::make_unique<adi3d::MpiSession>(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adi3d: error: %s\n", e.what());
    return adi3d::app::kExitUsage;
  }
  if (mpi->rank() != 0) spdlog::set_level(spdlog::level::warn);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return adi3d::app::kExitUsage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return adi3d::app::kExitOk;
  }
  if (command == "--version") {
    std::printf("adi3d %s (commit %s)\n", adi3d::app::version_string().c_str(), adi3d::app::git_commit());
    return adi3d::app::kExitOk;
  }
  try {
    if (command == "run") return adi3d::app::run_command(args, *mpi);
    if (command == "check") return adi3d::app::check_command(args);
    if (command == "info") return adi3d::app::info_command(args);
    if (command == "bench") return adi3d::app::bench_command(args, *mpi);
    if (command == "tune") return adi3d::app::tune_command(args);
  } catch (const std::exception& e) {
    // A failure may be this rank's alone while the others wait in a collective: one line
    // naming the rank, and every rank ends (MPI_Abort).
    mpi->abort(adi3d::app::kExitRuntime, e.what());
  }
  std::fprintf(stderr, "adi3d: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return adi3d::app::kExitUsage;
}
