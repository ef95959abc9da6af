// Output faults: a full disk (writes into /dev/full), a read-only filesystem (/proc), the
// output directory replaced by a file mid-run. Each is a clear one-line error naming the
// file, and the snapshots written before stay intact and listed. (Tests run as root, so
// permissions would not stop a write; these faults do.)
#include "io/checkpoint.hpp"
#include "io/hdf5_handles.hpp"
#include "io/hdf5_snapshots.hpp"
#include "io/vtk_snapshots.hpp"
#include "io_fixtures.hpp"

namespace adi3d::test {
namespace {

io::SeriesInfo info_for(const fs::path& dir) {
  io::SeriesInfo info;
  info.grid.n = {5, 4, 3};
  info.grid.lo = {0, 0, 0};
  info.grid.h = {0.25, 1.0 / 3, 0.5};
  info.dir = dir.string();
  info.deck_text = "[grid]\nn = 5 4 3\n";
  info.version = "adi3d test";
  info.problem = "heat";
  return info;
}

io::Snapshot snapshot(long step, const Grid3& g) {
  io::Snapshot s;
  s.step = step;
  s.time = 0.5 * static_cast<double>(step);
  io::FieldBuffer u;
  u.name = "u";
  for (std::size_t i = 0; i < g.size(); ++i) u.f64.push_back(static_cast<double>(step) * 1000 + static_cast<double>(i));
  s.fields.push_back(u);
  return s;
}

void expect_snapshots_intact(const std::string& h5, const Grid3& g, std::vector<long> steps) {
  io::h5::Hdf5Lock lock;
  io::h5::Handle file = io::h5::open_file(h5, false);
  io::h5::Handle snaps = io::h5::open_group(file, "snapshots", h5);
  for (long step : steps) {
    io::h5::Handle group = io::h5::open_group(snaps, io::snapshot_label(step), h5);
    std::vector<double> u;
    io::h5::read_field(group, "u", g, false, nullptr, &u, h5);
    EXPECT_EQ(u, snapshot(step, g).fields[0].f64) << "step " << step;
  }
}

TEST_F(IoTest, FullDiskWhileRewritingTheXdmfKeepsTheSeries) {
  const io::SeriesInfo info = info_for(dir_);
  io::Hdf5SeriesWriter writer(info);
  writer.write(snapshot(0, info.grid));
  writer.write(snapshot(1, info.grid));
  const std::string listed = slurp(dir_ / "snapshots.xdmf");
  fs::create_symlink("/dev/full", dir_ / "snapshots.xdmf.tmp");
  try {
    writer.write(snapshot(2, info.grid));
    FAIL() << "a write into /dev/full succeeded";
  } catch (const io::OutputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("snapshots.xdmf.tmp"), std::string::npos) << m;
    EXPECT_NE(m.find("No space left on device"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(slurp(dir_ / "snapshots.xdmf"), listed);  // still lists steps 0 and 1
  expect_snapshots_intact(writer.h5_path(), info.grid, {0, 1});
}

TEST_F(IoTest, FullDiskForAVtkImageKeepsTheSeries) {
  const io::SeriesInfo info = info_for(dir_);
  auto writer = io::make_vtk_series_writer(info);
  writer->write(snapshot(0, info.grid));
  const std::string pvd = slurp(dir_ / "snapshots.pvd");
  const std::string first = slurp(dir_ / "vtk" / "snapshot_000000.vti");
  fs::create_symlink("/dev/full", dir_ / "vtk" / "snapshot_000001.vti.tmp");
  try {
    writer->write(snapshot(1, info.grid));
    FAIL() << "a write into /dev/full succeeded";
  } catch (const io::OutputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("snapshot_000001.vti.tmp"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(slurp(dir_ / "snapshots.pvd"), pvd);
  EXPECT_EQ(slurp(dir_ / "vtk" / "snapshot_000000.vti"), first);
  EXPECT_FALSE(fs::exists(dir_ / "vtk" / "snapshot_000001.vti"));
}

TEST_F(IoTest, FullDiskForACheckpointKeepsTheOldOne) {
  const io::SeriesInfo info = info_for(dir_);
  io::CheckpointState state;
  state.grid = info.grid;
  state.step = 3;
  state.u = snapshot(3, info.grid).fields[0];
  const std::string path = (dir_ / "checkpoint.h5").string();
  io::write_checkpoint(path, state);
  const std::string good = slurp(path);
  state.step = 4;
  fs::create_symlink("/dev/full", path + ".tmp");
  EXPECT_THROW(io::write_checkpoint(path, state), io::OutputError);
  EXPECT_EQ(slurp(path), good);
  EXPECT_EQ(io::read_checkpoint(path).step, 3);
}

TEST_F(IoTest, OutputDirectoryReplacedByAFileMidRun) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  const io::SeriesInfo info = info_for(out);
  io::Hdf5SeriesWriter writer(info);
  writer.write(snapshot(0, info.grid));
  writer.write(snapshot(1, info.grid));
  fs::rename(out, dir_ / "moved");
  std::ofstream(out) << "not a directory";
  try {
    writer.write(snapshot(2, info.grid));
    FAIL() << "wrote into a file";
  } catch (const io::OutputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("h5/snapshot_000002.h5.tmp: cannot create the file"), std::string::npos) << m;
  }
  EXPECT_EQ(slurp(out), "not a directory");
  expect_snapshots_intact((dir_ / "moved" / "snapshots.h5").string(), info.grid, {0, 1});
}

TEST_F(IoTest, ReadOnlyFilesystemFailsBeforeStepping) {
  const std::string deck = write_deck(moving_deck("/proc/adi3d_out"));
  const Outcome o = run("run " + deck);
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("output.dir"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("summary"), std::string::npos) << o.out;
}

TEST_F(IoTest, UnwritableSnapshotFileIsARuntimeErrorNamingIt) {
  // snapshots.h5 is a directory: the run stops with exit 1 and one line naming the file.
  fs::create_directories(dir_ / "out" / "snapshots.h5");
  const Outcome o = run("run " + write_deck(moving_deck((dir_ / "out").string())) + " --set output.every=2");
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("snapshots.h5: rename into place failed: Is a directory"), std::string::npos) << o.err;
}

TEST_F(IoTest, UnusableVtkDirectoryIsARuntimeErrorNamingIt) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  fs::create_symlink("/dev/full", out / "vtk");
  const Outcome o = run("run " + write_deck(moving_deck(out.string())) + " --set output.every=2 "
                        "--set \"output.formats=hdf5 vtk\"");
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("vtk: cannot create the directory"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace adi3d::test
