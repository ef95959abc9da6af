// Faults injected into real runs of the adi3d executable (ADI3D_FAULT): a step that fails,
// and every allocation failing in turn, on the CPU backend (the GPU's own faults, lost
// devices included, are in tests/gpu/test_device_faults.cpp). Issue 40 item 4.
#include "fault_runs.hpp"

namespace adi3d::test {
namespace {

using InjectedFaults = FaultRunTest;

TEST_F(InjectedFaults, AFailedStepStopsWithOneLineAndItsCheckpointContinuesBitForBit) {
  fails_and_continues("cpu", "step:117", {"in step 117 of 200", "on cpu (", "injected by ADI3D_FAULT=step:117",
                                          "step 110 (t = 0.055)"});
}

TEST_F(InjectedFaults, EveryHostAllocationThatFailsIsOneClearLine) {
  const int allocations = every_allocation_fails_cleanly(heat_args(dir_ / "out", "cpu"), "host allocation failed: an array needs ");
  // u, the step's arrays, the staging buffers: a run that allocates nothing is not tested.
  EXPECT_GT(allocations, 3);
}

TEST_F(InjectedFaults, AFailedPoissonIterationSaysWhichAndWritesNothing) {
  const fs::path out = dir_ / "poisson";
  const Outcome o = run_with_fault("step:6", "run " + std::string(ADI3D_SOURCE_DIR) +
                                                 "/inputs/poisson_dirichlet.ini --quiet --set grid.n=9 --set solver.method=adi "
                                                 "--set solver.backend=cpu --set output.dir=" + out.string());
  expect_one_line_failure(o, {"in the Poisson solve, after iteration 5, on cpu (", "injected by ADI3D_FAULT=step:6"});
  EXPECT_FALSE(fs::exists(out / "summary.json"));
}

TEST_F(InjectedFaults, AMistypedSwitchStopsTheRunAndNamesIt) {
  for (const std::string bad : {"step", "step:0", "stp:3", "alloc:x", "step:3@", "step:3@-1"}) {
    const Outcome o = run_with_fault(bad, heat_args(dir_ / "out", "cpu"));
    EXPECT_EQ(o.code, 1) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("ADI3D_FAULT='" + bad + "': expected KIND:N"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace adi3d::test
