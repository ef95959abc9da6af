// GPU faults in real runs of the adi3d executable (ADI3D_FAULT, solvers/fault_injection.hpp):
// a kernel launch that fails, a kernel that traps and loses the device for the rest of the
// process, and every device allocation failing in turn. Each stops the run with exit 1
// and one line naming the operation, the step and the device; the last checkpoint reads
// back and continues bit for bit in a new process. Issue 40 item 4.
#include "../io/fault_runs.hpp"
#include "solvers/backend.hpp"

namespace adi3d::test {
namespace {

class DeviceFaults : public FaultRunTest {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda_device_summary();
    FaultRunTest::SetUp();
  }
};

// 300 checked launches: past the set-up's, well inside the 200 steps' (several each).
TEST_F(DeviceFaults, AFailedLaunchStopsWithOneLineAndItsCheckpointContinuesBitForBit) {
  fails_and_continues("cuda", "launch:300",
                      {"on cuda device 0", "kernel launch failed: cudaErrorLaunchFailure", ".cu:"});
}

TEST_F(DeviceFaults, ALostDeviceStopsWithOneLineAndItsCheckpointContinuesBitForBit) {
  fails_and_continues("cuda", "trap:300", {"on cuda device 0", "cudaErrorLaunchFailure"});
}

TEST_F(DeviceFaults, EveryDeviceAllocationThatFailsIsOneClearLine) {
  const int allocations =
      every_allocation_fails_cleanly(heat_args(dir_ / "out", "cuda"), "CUDA allocation failed: an array needs ");
  EXPECT_GT(allocations, 3);
}

}  // namespace
}  // namespace adi3d::test
