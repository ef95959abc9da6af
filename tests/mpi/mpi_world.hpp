#pragma once
// The ranks of the mpirun the MPI tests run under (mpi_test_main.cpp).
#include "solvers/distributed/communicator.hpp"

namespace adi3d::test {
Communicator& world();
}
