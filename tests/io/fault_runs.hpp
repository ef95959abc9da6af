#pragma once
// Runs of the adi3d executable with a fault injected (ADI3D_FAULT, solvers/fault_injection.hpp)
// and what every such run must show: exit 1, one line on stderr that says where the run
// was, on what and why, and, for a heat run with checkpoints, that the last checkpoint
// reads back and the line's restart command ends where the uninterrupted run ends, bit
// for bit. Shared by the CPU (tests/io) and GPU (tests/gpu) fault tests.
#include "io/checkpoint.hpp"
#include "io_fixtures.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace adi3d::test {

class FaultRunTest : public IoTest {
 protected:
  static constexpr long kSteps = 200;

  // heat_sine, kSteps steps, a checkpoint every 10 and a snapshot every 50, on `backend`.
  static std::string heat_args(const fs::path& out, const std::string& backend) {
    return "run " + std::string(ADI3D_SOURCE_DIR) + "/inputs/heat_sine.ini --quiet --set grid.n=17 --set time.dt=0.0005" +
           " --set solver.backend=" + backend + " --set output.formats=hdf5 --set output.every=50" +
           " --set output.checkpoint_every=10 --set output.dir=" + out.string();
  }

  // `args` for the executable with ADI3D_FAULT=fault, under a time limit: a run that hangs
  // after a fault fails the test instead of the suite.
  Outcome run_with_fault(const std::string& fault, const std::string& args) {
    return run(args, "ADI3D_FAULT=" + fault + " timeout 300");
  }

  // The checks on a failed run's outcome: exit 1, one line, every text in `says` in it.
  static void expect_one_line_failure(const Outcome& o, const std::vector<std::string>& says) {
    EXPECT_EQ(o.code, 1) << o.err;
    EXPECT_EQ(count_lines(o.err), 1) << o.err;
    EXPECT_EQ(o.err.rfind("adi3d: error: ", 0), 0u) << o.err;
    for (const std::string& s : says) EXPECT_NE(o.err.find(s), std::string::npos) << "no '" << s << "' in: " << o.err;
  }

  // A heat run on `backend` failed by `fault` in its stepping: the failure line (with
  // `says` in it) offers the last checkpoint, which reads back, and its command continues
  // to the uninterrupted run's final field, bit for bit.
  void fails_and_continues(const std::string& backend, const std::string& fault, const std::vector<std::string>& says) {
    const fs::path full = dir_ / "full", part = dir_ / "part";
    Outcome o = run(heat_args(full, backend));
    ASSERT_EQ(o.code, 0) << o.err;

    o = run_with_fault(fault, heat_args(part, backend));
    std::vector<std::string> all = says;
    all.insert(all.end(), {"in step ", " of " + std::to_string(kSteps), "reads back intact; to continue: adi3d run "});
    expect_one_line_failure(o, all);
    const io::CheckpointState state = io::read_checkpoint((part / "checkpoint.h5").string());
    EXPECT_GT(state.step, 0);
    EXPECT_LT(state.step, kSteps);
    EXPECT_NE(o.err.find("step " + std::to_string(state.step) + " "), std::string::npos) << o.err;

    const std::string said = "to continue: adi3d run ";
    const std::size_t at = o.err.find(said);
    ASSERT_NE(at, std::string::npos);
    std::string line = o.err.substr(at + said.size());
    line.pop_back();  // '\n'
    o = run("run " + line);
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("restart from step " + std::to_string(state.step)), std::string::npos) << o.out;
    const io::FieldBuffer a = stored_u((full / "snapshots.h5").string(), kSteps, state.grid);
    const io::FieldBuffer b = stored_u((part / "snapshots.h5").string(), kSteps, state.grid);
    ASSERT_EQ(a.size(), state.grid.size());
    ASSERT_EQ(b.size(), state.grid.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), state.grid.size() * sizeof(double)), 0) << "restart is not bit for bit";
  }

  // Fails the Nth allocation for N = 1, 2, ... until a run gets through: every failure is
  // exit 1 and one line naming the allocation; none crashes. Returns the allocations a
  // whole run made.
  int every_allocation_fails_cleanly(const std::string& args, const std::string& names) {
    for (int n = 1; n <= 400; ++n) {
      const Outcome o = run_with_fault("alloc:" + std::to_string(n), args);
      if (o.code == 0) {
        RecordProperty("allocations", n - 1);
        std::printf("[          ] %d allocations, each failed in turn\n", n - 1);
        return n - 1;
      }
      SCOPED_TRACE("ADI3D_FAULT=alloc:" + std::to_string(n));
      expect_one_line_failure(o, {names, "injected by ADI3D_FAULT=alloc:" + std::to_string(n)});
      if (HasFailure()) return -1;
    }
    ADD_FAILURE() << "400 allocations and still failing";
    return -1;
  }
};

}  // namespace adi3d::test
