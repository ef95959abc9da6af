// Checkpoint and restart: a run interrupted after its checkpoint and restarted from it ends
// with the same field, bit for bit, as the run that was never interrupted; bad checkpoints
// are refused with one line and nothing in the output directory changes.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "app/snapshot_pipeline.hpp"
#include "io/checkpoint.hpp"
#include "io/hdf5_handles.hpp"
#include "io_fixtures.hpp"

#include <cstring>
#include <map>

namespace adi3d::test {
namespace {

std::vector<long> stored_steps(const std::string& h5) {
  io::h5::Hdf5Lock lock;
  io::h5::Handle file = io::h5::open_file(h5, false);
  io::h5::Handle snaps = io::h5::open_group(file, "snapshots", h5);
  std::vector<long> steps;
  for (const std::string& name : io::h5::link_names(snaps, h5)) steps.push_back(std::stol(name));
  return steps;
}

// Stops the run after `stop_after` steps, as a crash would (the pipeline still finishes
// what it had queued, like a process that was killed after its last write).
template <class T>
class Crash final : public app::RunObserver<T> {
 public:
  Crash(app::RunObserver<T>& next, long stop_after) : next_(next), stop_after_(stop_after) {}
  void on_start(long s, double t, Backend<T>& b, const T* u) override { next_.on_start(s, t, b, u); }
  void on_step(long s, double t, Backend<T>& b, const T* u) override {
    next_.on_step(s, t, b, u);
    if (s == stop_after_) throw std::runtime_error("simulated crash");
  }
  void on_end(long s, double t, Backend<T>& b, const T* u) override { next_.on_end(s, t, b, u); }

 private:
  app::RunObserver<T>& next_;
  long stop_after_;
};

template <class T>
void run_interrupted(const std::string& deck_path, const std::vector<std::string>& sets, long stop_after) {
  const io::Deck deck = io::Deck::load(deck_path, sets);
  const io::RunConfig config = io::read_run_config(deck);
  const app::ProblemSetup<T> problem = app::setup_problem<T>(deck, config);
  fs::create_directories(config.output.dir);
  auto backend = make_cpu_backend<T>();
  auto pipeline = app::SnapshotPipeline<T>::for_run(config, problem);
  Crash<T> crash(*pipeline, stop_after);
  EXPECT_THROW(app::run_heat(config, problem, *backend, false, &crash), std::runtime_error);
}

class Restart : public IoTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(Restart, RestartedRunEqualsUninterruptedRunBitForBit) {
  const std::string precision = GetParam();
  const bool single = precision == "float";
  const std::string deck = write_deck(moving_deck((dir_ / "full").string()));
  const std::string p = "--set solver.precision=" + precision;
  // Uninterrupted: 10 steps.
  Outcome o = run("run " + deck + " " + p);
  ASSERT_EQ(o.code, 0) << o.err;
  // Interrupted after step 7, with a checkpoint at step 5 and snapshots every 2 steps.
  const std::string part = (dir_ / "part").string();
  const std::vector<std::string> sets = {"output.dir=" + part, "output.checkpoint_every=5", "output.every=2",
                                         "solver.precision=" + precision};
  if (single)
    run_interrupted<float>(deck, sets, 7);
  else
    run_interrupted<double>(deck, sets, 7);
  const std::string checkpoint = part + "/checkpoint.h5";
  ASSERT_TRUE(fs::exists(checkpoint));
  const io::CheckpointState state = io::read_checkpoint(checkpoint);
  EXPECT_EQ(state.step, 5);
  EXPECT_EQ(state.precision, single ? io::Precision::f32 : io::Precision::f64);
  EXPECT_NE(state.deck_text.find("sin(x + y + z + t)"), std::string::npos);
  EXPECT_EQ(stored_steps(part + "/snapshots.h5"), (std::vector<long>{0, 2, 4, 6}));

  o = run("run " + deck + " " + p + " --set output.dir=" + part + " --set output.every=2 --restart " + checkpoint);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("restart from step 5"), std::string::npos) << o.out;
  const Grid3 g = io::read_run_config(io::Deck::load(deck)).grid;
  const io::FieldBuffer a = stored_u((dir_ / "full" / "snapshots.h5").string(), 10, g, single);
  const io::FieldBuffer b = stored_u(part + "/snapshots.h5", 10, g, single);
  ASSERT_EQ(a.size(), g.size());
  ASSERT_EQ(b.size(), g.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), g.size() * (single ? 4 : 8)), 0) << "restart is not bit for bit";
  // The series continues: the step-6 snapshot of the crashed run is replaced by the new one.
  EXPECT_EQ(stored_steps(part + "/snapshots.h5"), (std::vector<long>{0, 2, 4, 6, 8, 10}));
  const std::string xdmf = slurp(part + "/snapshots.xdmf");
  EXPECT_LT(xdmf.find("000004.h5:/u"), xdmf.find("000006.h5:/u"));
  EXPECT_LT(xdmf.find("000006.h5:/u"), xdmf.find("000010.h5:/u"));
}

INSTANTIATE_TEST_SUITE_P(Precisions, Restart, ::testing::Values("double", "float"));

class BadRestart : public IoTest {
 protected:
  void SetUp() override {
    IoTest::SetUp();
    deck_ = write_deck(moving_deck((dir_ / "out").string()));
    const Outcome o = run("run " + deck_ + " --set output.checkpoint_every=5 --set output.every=5");
    ASSERT_EQ(o.code, 0) << o.err;
    checkpoint_ = (dir_ / "out" / "checkpoint.h5").string();
    before_ = listing();
  }
  // Every file of the output directory with its contents.
  std::map<std::string, std::string> listing() {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "out"))
      if (e.is_regular_file()) files[e.path().string()] = slurp(e.path());
    return files;
  }
  void expect_refused(const Outcome& o, const std::string& message) {
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_EQ(count_lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
    EXPECT_EQ(o.out.find("summary"), std::string::npos) << o.out;
    EXPECT_TRUE(listing() == before_) << "the output directory changed";
  }
  std::string deck_, checkpoint_;
  std::map<std::string, std::string> before_;
};

TEST_F(BadRestart, OtherGridSaysWhatDiffers) {
  expect_refused(run("run " + deck_ + " --set grid.n=11 --restart " + checkpoint_),
                 "grid 9 x 8 x 7 in the checkpoint, 11 x 11 x 11 in the deck");
  expect_refused(run("run " + deck_ + " --set grid.hi=2 --restart " + checkpoint_), "grid box");
}

TEST_F(BadRestart, OtherPrecisionSaysWhatDiffers) {
  expect_refused(run("run " + deck_ + " --set solver.precision=float --restart " + checkpoint_),
                 "precision double in the checkpoint, float in the deck");
}

TEST_F(BadRestart, OtherTimeStepSaysWhatDiffers) {
  expect_refused(run("run " + deck_ + " --set time.dt=0.02 --restart " + checkpoint_),
                 "does not lie on time.dt = 0.02");
}

TEST_F(BadRestart, MissingCheckpoint) {
  expect_refused(run("run " + deck_ + " --restart " + (dir_ / "nope.h5").string()), "no such checkpoint file");
}

TEST_F(BadRestart, TruncatedCheckpoint) {
  const std::string bytes = slurp(checkpoint_);
  const std::string bad = (dir_ / "truncated.h5").string();
  std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_refused(run("run " + deck_ + " --restart " + bad), "truncated.h5");
  EXPECT_NE(run("run " + deck_ + " --restart " + bad).err.find("unreadable checkpoint"), std::string::npos);
}

TEST_F(BadRestart, CorruptDataIsCaughtByTheChecksum) {
  std::string bytes = slurp(checkpoint_);
  const io::CheckpointState state = io::read_checkpoint(checkpoint_);
  const std::string raw(static_cast<const char*>(state.u.data()), state.u.size() * 8);
  const std::size_t at = bytes.find(raw);
  ASSERT_NE(at, std::string::npos);
  bytes[at + raw.size() / 2] ^= 0x10;
  const std::string bad = (dir_ / "corrupt.h5").string();
  std::ofstream(bad, std::ios::binary) << bytes;
  expect_refused(run("run " + deck_ + " --restart " + bad), "corrupt checkpoint: checksum of u does not match");
}

// A damaged file on which HDF5 1.10 reads freed memory (found by tests/fuzz): refused in
// one line, whether the look in a child process crashed or HDF5 then reported it.
TEST_F(BadRestart, FileThatDamagesHdf5sReader) {
  const std::string bad = std::string(ADI3D_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_checkpoint/attribute_use_after_free.h5";
  EXPECT_THROW(io::read_checkpoint(bad), io::CheckpointError);
  expect_refused(run("run " + deck_ + " --restart " + bad), "attribute_use_after_free.h5");
}

TEST_F(BadRestart, NotACheckpoint) {
  expect_refused(run("run " + deck_ + " --restart " + (dir_ / "out" / "snapshots.h5").string()),
                 "not an adi3d checkpoint");
  expect_refused(run("run " + deck_ + " --restart " + deck_), "unreadable checkpoint");
}

// A restart on several ranks reads each rank's planes only (its slab and ghost planes, in
// the slab's order, wrapping around on a periodic z), each checked against its checksum.
TEST_F(BadRestart, ListedPlanesAreReadInOrderAndCheckedAlone) {
  const io::CheckpointState whole = io::read_checkpoint(checkpoint_);
  const std::size_t plane = static_cast<std::size_t>(whole.grid.n[0]) * whole.grid.n[1];
  ASSERT_EQ(whole.grid.n[2], 7);
  const std::vector<int> wrapped = {6, 0, 1};
  const io::CheckpointState part = io::read_checkpoint(checkpoint_, wrapped);
  ASSERT_EQ(part.u.size(), wrapped.size() * plane);
  EXPECT_EQ(part.planes, wrapped);
  for (std::size_t q = 0; q < wrapped.size(); ++q)
    EXPECT_EQ(std::memcmp(part.u.f64.data() + q * plane, whole.u.f64.data() + static_cast<std::size_t>(wrapped[q]) * plane,
                          plane * sizeof(double)),
              0)
        << "plane " << wrapped[q];

  // One bit flipped in plane 3: the planes around it still read, plane 3 does not.
  std::string bytes = slurp(checkpoint_);
  const std::string raw(static_cast<const char*>(whole.u.data()), whole.u.size() * 8);
  const std::size_t at = bytes.find(raw);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3 * plane * 8 + 17] ^= 0x10;
  const std::string bad = (dir_ / "plane3.h5").string();
  std::ofstream(bad, std::ios::binary) << bytes;
  EXPECT_NO_THROW(io::read_checkpoint(bad, {0, 1, 2}));
  EXPECT_NO_THROW(io::read_checkpoint(bad, {4, 5, 6}));
  try {
    io::read_checkpoint(bad, {2, 3, 4});
    ADD_FAILURE() << "plane 3 read although its checksum does not match";
  } catch (const io::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("in plane z = 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::read_checkpoint(checkpoint_, {7}), io::CheckpointError);  // past the last plane
}

}  // namespace
}  // namespace adi3d::test
