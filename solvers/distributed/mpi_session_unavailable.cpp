// Built when ADI3D_MPI=OFF: the one-rank session (mpi_session.hpp).
#include "solvers/distributed/mpi_session.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace adi3d {

bool mpi_compiled() { return false; }

MpiSession::MpiSession(int*, char***) : world_(make_self_communicator()) {
  const int launched = launcher_rank_count();
  if (launched > 1)
    throw std::runtime_error("started as one of " + std::to_string(launched) +
                             " ranks, but this adi3d was built without MPI, so each rank would run the "
                             "whole deck alone; rebuild with -DADI3D_MPI=ON (Debian: libopenmpi-dev)");
}

MpiSession::~MpiSession() = default;

void MpiSession::abort(int code, const std::string& why) {
  std::fprintf(stderr, "adi3d: error: %s\n", why.c_str());
  std::exit(code);
}

}  // namespace adi3d
