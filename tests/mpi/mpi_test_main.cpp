// GoogleTest under mpirun: MPI for the whole process (the product's own session), and the
// results printed by rank 0 alone. Every rank runs every test; a failure on any rank fails
// the run (mpirun reports the worst exit status).
#include "mpi_world.hpp"
#include "solvers/distributed/mpi_session.hpp"

#include <gtest/gtest.h>

namespace {
adi3d::Communicator* world_communicator = nullptr;
}

adi3d::Communicator& adi3d::test::world() { return *world_communicator; }

int main(int argc, char** argv) {
  adi3d::MpiSession mpi(&argc, &argv);
  world_communicator = &mpi.world();
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  double worst = failed;
  mpi.world().allreduce_max(&worst, 1);
  return worst != 0 ? 1 : 0;
}
