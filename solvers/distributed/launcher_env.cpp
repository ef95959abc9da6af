// What a launcher tells its ranks through the environment (mpi_session.hpp).
#include "solvers/distributed/mpi_session.hpp"

#include <cstdlib>

namespace adi3d {

namespace {
constexpr const char* kLauncherVariables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
                                              "SLURM_NTASKS"};
}  // namespace

int launcher_rank_count() {
  for (const char* name : kLauncherVariables) {
    const char* value = std::getenv(name);
    if (!value) continue;
    const int n = std::atoi(value);
    if (n > 0) return n;
  }
  return 1;
}

bool started_by_launcher() {
  for (const char* name : kLauncherVariables)
    if (std::getenv(name)) return true;
  return false;
}

}  // namespace adi3d
