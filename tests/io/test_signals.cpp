// Signals: SIGTERM or SIGINT stops `adi3d run` after its step with a checkpoint (even where
// the deck asks for none), a line that says how to continue, and exit 143 / 130; running
// that line ends where the uninterrupted run ends, bit for bit. A second signal exits at
// once and leaves the last complete checkpoint. Real signals to a real process.
#include "io/checkpoint.hpp"
#include "io/hdf5_handles.hpp"
#include "io/snapshot_files.hpp"
#include "io_fixtures.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <thread>

namespace adi3d::test {
namespace {

constexpr long kSteps = 2000;  // a few seconds on one busy core

// heat_sine on a small grid with many short steps, a snapshot every 100 steps.
std::vector<std::string> long_run(const fs::path& out, int n = 33) {
  return {"run", std::string(ADI3D_SOURCE_DIR) + "/inputs/heat_sine.ini", "--quiet", "--set", "grid.n=" + std::to_string(n),
          "--set", "time.dt=0.00005", "--set", "solver.backend=cpu", "--set", "output.formats=hdf5",
          "--set", "output.every=100", "--set", "output.dir=" + out.string()};
}

class SignalTest : public IoTest {
 protected:
  // Starts adi3d with `args`, stdout and stderr into files of the test directory.
  pid_t start(std::vector<std::string> args) {
    args.insert(args.begin(), adi3d_exe());
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int out = ::open((dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, STDOUT_FILENO);
      ::dup2(err, STDERR_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  static int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1000 - WTERMSIG(status);
  }
  // Waits (at most a minute) until `file` exists and contains `text`: the run is stepping.
  static bool wait_for(const fs::path& file, const std::string& text) {
    for (int i = 0; i < 6000; ++i) {
      if (fs::exists(file) && slurp(file).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // The arguments for IoTest::run (which adds the executable).
  static std::string command_line(const std::vector<std::string>& args) {
    std::string cmd;
    for (const std::string& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    return cmd;
  }

  void stop_and_restart(int signal, int expected_code) {
    const fs::path full = dir_ / "full", part = dir_ / "part";
    Outcome o = run(command_line(long_run(full)));
    ASSERT_EQ(o.code, 0) << o.err;

    const pid_t pid = start(long_run(part));
    // The step-100 snapshot in the index: stepping has begun.
    ASSERT_TRUE(wait_for(part / "snapshots.xdmf", "000100.h5:/u"));
    ::kill(pid, signal);
    ASSERT_EQ(wait_exit(pid), expected_code) << slurp(dir_ / "stderr");
    const std::string err = slurp(dir_ / "stderr");
    const std::string checkpoint = (part / "checkpoint.h5").string();
    ASSERT_TRUE(fs::exists(checkpoint)) << err;
    const io::CheckpointState state = io::read_checkpoint(checkpoint);
    EXPECT_GT(state.step, 100);
    EXPECT_LT(state.step, kSteps);
    EXPECT_NE(slurp(part / "snapshots.xdmf").find("000100.h5:/u"), std::string::npos);
    EXPECT_EQ(count_lines(err), 1) << err;
    const std::string said = "to continue: adi3d run ";
    const std::size_t at = err.find(said);
    ASSERT_NE(at, std::string::npos) << err;
    EXPECT_NE(err.find(fmt_step(state.step)), std::string::npos) << err;

    // The line, as printed, with this build's executable for "adi3d".
    std::string line = err.substr(at + said.size());
    line.pop_back();  // '\n'
    o = run("run " + line);
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("restart from step " + std::to_string(state.step)), std::string::npos) << o.out;
    const Grid3 g = io::read_checkpoint(checkpoint).grid;
    const io::FieldBuffer a = stored_u((full / "snapshots.h5").string(), kSteps, g);
    const io::FieldBuffer b = stored_u((part / "snapshots.h5").string(), kSteps, g);
    ASSERT_EQ(a.size(), g.size());
    ASSERT_EQ(b.size(), g.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), g.size() * sizeof(double)), 0) << "restart is not bit for bit";
  }

  static std::string fmt_step(long step) { return "at step " + std::to_string(step) + " "; }
};

TEST_F(SignalTest, SigtermCheckpointsExits143AndRestartsBitForBit) { stop_and_restart(SIGTERM, 143); }

TEST_F(SignalTest, SigintCheckpointsExits130AndRestartsBitForBit) { stop_and_restart(SIGINT, 130); }

TEST_F(SignalTest, SecondSignalExitsAtOnceKeepingTheLastCheckpoint) {
  // Slower steps, so that the first signal's step and checkpoint are still in progress
  // when the second comes; a checkpoint every 20 steps to be kept.
  const fs::path out = dir_ / "out";
  std::vector<std::string> args = long_run(out, 65);
  args.insert(args.end(), {"--set", "output.checkpoint_every=20"});
  const pid_t pid = start(args);
  // The step-200 snapshot is in the index: the step-100 checkpoint is written (the writer
  // thread takes jobs in order).
  ASSERT_TRUE(wait_for(out / "snapshots.xdmf", "000200.h5:/u"));
  // Two different signals, so that the kernel cannot merge them into one; the code is
  // that of whichever it delivers second.
  ::kill(pid, SIGINT);
  ::kill(pid, SIGTERM);
  const int code = wait_exit(pid);
  EXPECT_TRUE(code == 143 || code == 130) << code;
  const std::string err = slurp(dir_ / "stderr");
  EXPECT_NE(err.find("second signal"), std::string::npos) << err;
  EXPECT_EQ(err.find("to continue"), std::string::npos) << err;
  const io::CheckpointState state = io::read_checkpoint((out / "checkpoint.h5").string());
  EXPECT_EQ(state.step % 20, 0) << "not one of the periodic checkpoints";
  EXPECT_GE(state.step, 100);
  EXPECT_LT(state.step, kSteps);
}

}  // namespace
}  // namespace adi3d::test
