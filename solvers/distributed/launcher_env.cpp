// What a launcher tells its ranks through the environment (mpi_session.hpp).
#include "solvers/distributed/mpi_session.hpp"

#include <cstdlib>

namespace adi3d {

int launcher_rank_count() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS"}) {
    const char* value = std::getenv(name);
    if (!value) continue;
    const int n = std::atoi(value);
    if (n > 0) return n;
  }
  return 1;
}

}  // namespace adi3d
