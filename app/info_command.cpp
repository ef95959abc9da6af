// adi3d info: what this binary is and what it can run on.
#include "app/commands.hpp"
#include "solvers/backend.hpp"
#include "solvers/distributed/device_exchange.hpp"
#include "solvers/distributed/mpi_session.hpp"

#include <omp.h>

#include <cstdio>

namespace adi3d::app {

std::string version_string() { return ADI3D_VERSION; }

int info_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::printf("usage: adi3d info\n\nPrints the version, build options and CUDA devices.\n");
    return kExitOk;
  }
  if (!args.empty()) {
    std::fprintf(stderr, "adi3d info: takes no arguments\n");
    return kExitUsage;
  }
  std::printf("adi3d %s\n", version_string().c_str());
  std::printf("  commit           %s\n", git_commit());
  std::printf("  build type       %s\n", ADI3D_BUILD_TYPE);
  std::printf("  compiler         %s\n", ADI3D_COMPILER);
  std::printf("  OpenMP threads   %d\n", omp_get_max_threads());
  std::printf("  CUDA backend     %s\n", cuda_compiled() ? "compiled (architectures " ADI3D_CUDA_ARCHS ")" : "not compiled");
  std::printf("  CUDA devices     %s\n", cuda_device_summary().c_str());
  std::printf("  distributed      %s\n", !mpi_compiled()   ? "not compiled (no MPI: configure with libopenmpi-dev)"
                                         : nccl_compiled() ? "MPI, NCCL between GPUs (mpirun -np P adi3d run DECK)"
                                                           : "MPI, GPUs through host memory (no NCCL)");
  return kExitOk;
}

}  // namespace adi3d::app
