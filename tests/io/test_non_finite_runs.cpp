// A run whose field stops being finite (issue 39 item 4) exits 1 naming the step, the
// time and a node, and leaves what it wrote before as it was: the snapshots up to the last
// good one, their index, and the checkpoint of a good step, with no NaN in any of them.
#include "io/checkpoint.hpp"
#include "io/hdf5_handles.hpp"
#include "io/run_config.hpp"
#include "io_fixtures.hpp"

#include <cmath>
#include <vector>

namespace adi3d::test {
namespace {

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// A source of 1e307 with almost no diffusion: u grows by about dt * f a step and passes
// double's largest value within a few dozen steps, while the data stay finite.
std::string overflowing_deck(const std::string& dir) {
  return "[grid]\nn = 9\n[time]\ndt = 1\nt_end = 100\n[material]\ndiffusivity = 1e-6\n"
         "[source]\nf = 1e307\n[solver]\nbackend = cpu\n"
         "[output]\ndir = " + dir + "\nformats = hdf5 vtk\nevery = 2\ncheckpoint_every = 2\n";
}

TEST_F(IoTest, FieldThatOverflowsStopsTheRunAndKeepsTheGoodOutputs) {
  const std::string out = (dir_ / "out").string();
  const Outcome o = run("run -q " + write_deck(overflowing_deck(out)));
  ASSERT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("the field is no longer finite at step "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(t = "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("at node (i, j, k) = ("), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(x, y, z) = ("), std::string::npos) << o.err;
  const long failed_at = std::stol(o.err.substr(o.err.find("at step ") + 8));
  EXPECT_EQ(o.out.find("summary"), std::string::npos) << o.out;

  const Grid3 g = io::read_run_config(io::Deck::load((dir_ / "deck.ini").string())).grid;
  // Every snapshot written is before the failure and finite; the checkpoint too.
  const std::string h5 = out + "/snapshots.h5";
  long last_step = -1;
  {
    io::h5::Hdf5Lock lock;
    io::h5::Handle file = io::h5::open_file(h5, false);
    io::h5::Handle snaps = io::h5::open_group(file, "snapshots", h5);
    const std::vector<std::string> names = io::h5::link_names(snaps, h5);
    ASSERT_GE(names.size(), 2u);
    for (const std::string& name : names) {
      io::h5::Handle group = io::h5::open_group(snaps, name, h5);
      const long step = io::h5::read_attr_long(group, "step", h5);
      std::vector<double> u;
      io::h5::read_field(group, "u", g, false, nullptr, &u, h5);
      EXPECT_LT(step, failed_at) << name;
      EXPECT_TRUE(all_finite(u)) << name;
      last_step = std::max(last_step, step);
    }
  }
  EXPECT_GE(last_step, failed_at - 2) << "the snapshot before the failure is there";
  const io::CheckpointState cp = io::read_checkpoint(out + "/checkpoint.h5");
  EXPECT_LT(cp.step, failed_at);
  EXPECT_TRUE(all_finite(cp.u.f64));
  // The indexes name the snapshots that exist.
  const std::string xdmf = slurp(out + "/snapshots.xdmf");
  EXPECT_NE(xdmf.find("</Xdmf>"), std::string::npos) << xdmf;
  EXPECT_TRUE(fs::exists(out + "/vtk/snapshot_" + std::string(6 - std::to_string(last_step).size(), '0') +
                         std::to_string(last_step) + ".vti"));
  EXPECT_NE(slurp(out + "/snapshots.pvd").find("</VTKFile>"), std::string::npos);
}

// The check is every 20 steps without outputs: a run that blows up still stops, and says
// where, before its final state or its errors are reported.
TEST_F(IoTest, FieldThatOverflowsWithoutOutputsStillStops) {
  std::string deck = overflowing_deck((dir_ / "out").string());
  deck.replace(deck.find("formats = hdf5 vtk\nevery = 2\ncheckpoint_every = 2\n"),
               std::string("formats = hdf5 vtk\nevery = 2\ncheckpoint_every = 2\n").size(), "formats = none\n");
  const Outcome o = run("run -q " + write_deck(deck));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.err.find("at step 20 (t = 20)"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace adi3d::test
