// Snapshots end to end: the HDF5 layout and metadata, the XDMF index, the VTK series,
// cadence by steps and by time, float output, and the writer queue on the CPU backend.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "app/run_failure.hpp"
#include "app/snapshot_pipeline.hpp"
#include "io/checkpoint.hpp"
#include "io/hdf5_handles.hpp"
#include "io/hdf5_snapshots.hpp"
#include "io/snapshot_queue.hpp"
#include "io_fixtures.hpp"
#include "pipeline_fixtures.hpp"
#include "physics/grid_functions.hpp"

#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataReader.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

namespace adi3d::test {
namespace {

using io::h5::Handle;

struct Stored {
  long step;
  double time;
  std::vector<double> u, error;
  int u_bytes;
};

std::vector<Stored> read_series(const std::string& path, const Grid3& g) {
  io::h5::Hdf5Lock lock;
  Handle file = io::h5::open_file(path, false);
  Handle snaps = io::h5::open_group(file, "snapshots", path);
  std::vector<Stored> out;
  for (const std::string& name : io::h5::link_names(snaps, path)) {
    Handle group = io::h5::open_group(snaps, name, path);
    Stored s;
    s.step = io::h5::read_attr_long(group, "step", path);
    s.time = io::h5::read_attr_double(group, "time", path);
    s.u_bytes = io::h5::dataset_float_size(group, "u", path);
    io::h5::read_field(group, "u", g, false, nullptr, &s.u, path);
    if (io::h5::has_link(group, "error", path)) io::h5::read_field(group, "error", g, false, nullptr, &s.error, path);
    EXPECT_EQ(name, io::snapshot_label(s.step));
    out.push_back(std::move(s));
  }
  return out;
}

Grid3 deck_grid(const std::string& deck) { return io::read_run_config(io::Deck::load(deck)).grid; }

TEST_F(IoTest, Hdf5SeriesLayoutMetadataAndXdmf) {
  const std::string deck = write_deck(moving_deck((dir_ / "out").string()));
  const Outcome o = run("run " + deck + " --set output.every=4");
  ASSERT_EQ(o.code, 0) << o.err;
  const Grid3 g = deck_grid(deck);
  const std::string h5 = (dir_ / "out" / "snapshots.h5").string();
  const std::vector<Stored> series = read_series(h5, g);
  ASSERT_EQ(series.size(), 4u);  // steps 0, 4, 8 and the final 10
  const long steps[] = {0, 4, 8, 10};
  const physics::Formula exact("sin(x + y + z + t)");
  for (std::size_t s = 0; s < series.size(); ++s) {
    EXPECT_EQ(series[s].step, steps[s]);
    EXPECT_EQ(series[s].u_bytes, 8);
    ASSERT_EQ(series[s].error.size(), g.size());
    // error = u - exact, node by node, x fastest.
    std::vector<double> ex(g.size());
    physics::sample_grid(exact, g, series[s].time, ex.data());
    for (std::size_t i = 0; i < g.size(); i += 37) EXPECT_DOUBLE_EQ(series[s].error[i], series[s].u[i] - ex[i]);
    EXPECT_LT(*std::max_element(series[s].error.begin(), series[s].error.end()), 1e-3);
  }
  EXPECT_DOUBLE_EQ(series.back().time, 0.1);
  // Initial data, x fastest: u[i + nx (j + ny k)] = sin(x_i + y_j + z_k).
  EXPECT_DOUBLE_EQ(series[0].u[g.index(3, 2, 1)], std::sin(g.coord(0, 3) + g.coord(1, 2) + g.coord(2, 1)));

  io::h5::Hdf5Lock lock;
  Handle file = io::h5::open_file(h5, false);
  EXPECT_EQ(io::h5::read_attr_long3(file, "shape", h5), (std::array<long, 3>{9, 8, 7}));
  EXPECT_EQ(io::h5::read_attr_double3(file, "origin", h5), (std::array<double, 3>{0, -0.5, 0.25}));
  EXPECT_EQ(io::h5::read_attr_double3(file, "spacing", h5), (std::array<double, 3>{1.0 / 8, 1.0 / 7, 1.25 / 6}));
  EXPECT_NE(io::h5::read_attr_string(file, "version", h5).find("adi3d "), std::string::npos);
  EXPECT_NE(io::h5::read_string_dataset(file, "deck", h5).find("exact = sin(x + y + z + t)"), std::string::npos);
  EXPECT_NE(io::h5::read_string_dataset(file, "deck", h5).find("output.every=4"), std::string::npos);

  const std::string xdmf = slurp(dir_ / "out" / "snapshots.xdmf");
  EXPECT_NE(xdmf.find("CollectionType=\"Temporal\""), std::string::npos);
  EXPECT_NE(xdmf.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"7 8 9\""), std::string::npos) << xdmf;
  EXPECT_NE(xdmf.find(">0.25 -0.5 0</DataItem>"), std::string::npos) << "origin in z y x order";
  EXPECT_NE(xdmf.find(">h5/snapshot_000008.h5:/error</DataItem>"), std::string::npos) << xdmf;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "h5" / "snapshot_000008.h5"));
  EXPECT_NE(xdmf.find("<Time Value=\"0.10000000000000001\"/>"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "snapshots.xdmf.tmp"));
}

TEST_F(IoTest, FloatOutputAndCadenceByTime) {
  const std::string deck = write_deck(moving_deck((dir_ / "out").string()));
  const Outcome o = run("run " + deck + " --set output.interval=0.03 --set output.precision=float "
                        "--set output.fields=u");
  ASSERT_EQ(o.code, 0) << o.err;
  const std::vector<Stored> series = read_series((dir_ / "out" / "snapshots.h5").string(), deck_grid(deck));
  std::vector<long> steps;
  for (const Stored& s : series) {
    steps.push_back(s.step);
    EXPECT_EQ(s.u_bytes, 4);
    EXPECT_TRUE(s.error.empty());
  }
  EXPECT_EQ(steps, (std::vector<long>{0, 3, 6, 9, 10}));
}

TEST_F(IoTest, VtkSeriesMatchesHdf5) {
  const std::string deck = write_deck(moving_deck((dir_ / "out").string()));
  const Outcome o = run("run " + deck + " --set output.every=5 --set \"output.formats=hdf5 vtk\"");
  ASSERT_EQ(o.code, 0) << o.err;
  const Grid3 g = deck_grid(deck);
  const std::vector<Stored> series = read_series((dir_ / "out" / "snapshots.h5").string(), g);
  const std::string pvd = slurp(dir_ / "out" / "snapshots.pvd");
  ASSERT_EQ(series.size(), 3u);
  for (const Stored& s : series) {
    const std::string rel = "vtk/snapshot_" + io::snapshot_label(s.step) + ".vti";
    EXPECT_NE(pvd.find("file=\"" + rel + "\""), std::string::npos) << pvd;
    const std::string vti = slurp(dir_ / "out" / rel);
    EXPECT_NE(vti.find("format=\"appended\""), std::string::npos);
    EXPECT_NE(vti.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);
    vtkNew<vtkXMLImageDataReader> reader;
    reader->SetFileName((dir_ / "out" / rel).c_str());
    reader->Update();
    vtkImageData* image = reader->GetOutput();
    int dims[3];
    image->GetDimensions(dims);
    EXPECT_EQ(dims[0], 9);
    EXPECT_EQ(dims[2], 7);
    EXPECT_DOUBLE_EQ(image->GetOrigin()[1], -0.5);
    EXPECT_DOUBLE_EQ(image->GetSpacing()[2], 1.25 / 6);
    vtkDataArray* u = image->GetPointData()->GetArray("u");
    ASSERT_NE(u, nullptr);
    ASSERT_NE(image->GetPointData()->GetArray("error"), nullptr);
    ASSERT_EQ(static_cast<std::size_t>(u->GetNumberOfTuples()), g.size());
    for (std::size_t i = 0; i < g.size(); ++i) ASSERT_EQ(u->GetTuple1(static_cast<vtkIdType>(i)), s.u[i]);
  }
}

TEST_F(IoTest, QueuedSnapshotsAreTheFieldsOfTheirSteps) {
  InProcess p(write_deck(moving_deck((dir_ / "out").string())), {"output.every=1"});
  fs::create_directories(p.config.output.dir);
  auto recorder = std::make_unique<SlowRecorder>();
  SlowRecorder* rec = recorder.get();
  std::vector<std::unique_ptr<io::SnapshotWriter>> writers;
  writers.push_back(std::move(recorder));
  app::SnapshotPipeline<double> pipeline(p.config, p.problem, std::move(writers), false, 2);
  Capture capture(pipeline, p.config.grid.size());
  const auto start = std::chrono::steady_clock::now();
  app::run_heat(p.config, p.problem, *p.backend, false, &capture);
  ASSERT_EQ(rec->got.size(), 11u);  // steps 0..10
  for (const auto& [step, u] : rec->got) EXPECT_EQ(u, capture.fields.at(step)) << "step " << step;
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(11 * 15));
}

TEST_F(IoTest, QueuePropagatesAWriteErrorToTheMainThread) {
  InProcess p(write_deck(moving_deck((dir_ / "out").string())), {"output.every=2"});
  fs::create_directories(p.config.output.dir);
  std::vector<std::unique_ptr<io::SnapshotWriter>> writers;
  writers.push_back(std::make_unique<SlowRecorder>(1));  // the second snapshot fails
  app::SnapshotPipeline<double> pipeline(p.config, p.problem, std::move(writers), false, 2);
  try {
    app::run_heat(p.config, p.problem, *p.backend, false, &pipeline);
    FAIL() << "no error came back";
  } catch (const app::RunFailure& e) {
    // The writer's error, after where the run was when it came back (run_failure.hpp).
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("in step ", 0), 0u) << what;
    EXPECT_NE(what.find(" on cpu ("), std::string::npos) << what;
    const std::string cause = ": recorder.h5: injected write failure";
    EXPECT_EQ(what.substr(what.size() - std::min(what.size(), cause.size())), cause) << what;
  }
}

TEST(WriterQueue, RunsInOrderStopsAfterAFailureAndRethrows) {
  io::WriterQueue queue(1);
  std::vector<int> ran;
  std::atomic<bool> release{false};
  queue.push([&] {
    while (!release) std::this_thread::yield();
    ran.push_back(1);
  });
  queue.push([&] { ran.push_back(2); });
  release = true;
  queue.push([&]() -> void { throw io::OutputError("disk on fire"); });
  try {
    queue.push([&] { ran.push_back(4); });  // queued or refused, depending on timing
  } catch (const io::OutputError&) {
  }
  EXPECT_THROW(queue.drain(), io::OutputError);
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));  // nothing runs after the failure
  EXPECT_THROW(queue.push([] {}), io::OutputError);
  EXPECT_THROW(queue.check(), io::OutputError);
}

TEST(WriterQueue, WithoutAThreadRunsEachJobAtOnceAndRethrowsLater) {
  io::WriterQueue queue(1, false);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran_on;
  queue.push([&] { ran_on.push_back(std::this_thread::get_id()); });
  queue.push([&] { ran_on.push_back(std::this_thread::get_id()); });
  EXPECT_EQ(ran_on, (std::vector<std::thread::id>{caller, caller}));  // both done, no queue depth wait
  queue.push([]() -> void { throw io::OutputError("disk on fire"); });  // stored, as on a thread
  EXPECT_THROW(queue.check(), io::OutputError);
  EXPECT_THROW(queue.push([&] { ran_on.push_back(caller); }), io::OutputError);
  EXPECT_EQ(ran_on.size(), 2u);  // nothing runs after the failure
  EXPECT_THROW(queue.drain(), io::OutputError);
}

// A failed distributed run waits for its writes in flight (run_command.cpp), but not forever.
TEST(WriterQueue, DrainForGivesUpOnAJobThatDoesNotEndAndSeesOneThatDoes) {
  io::WriterQueue queue(2);
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  queue.push([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done;
  });
  queue.push([&] { ++done; });
  EXPECT_FALSE(queue.drain_for(std::chrono::milliseconds(50)));
  EXPECT_EQ(done, 0);
  release = true;
  EXPECT_TRUE(queue.drain_for(std::chrono::seconds(30)));
  EXPECT_EQ(done, 2);
  queue.push([]() -> void { throw io::OutputError("disk on fire"); });
  EXPECT_THROW(queue.drain_for(std::chrono::seconds(30)), io::OutputError);
}

}  // namespace
}  // namespace adi3d::test

namespace adi3d::test {
namespace {

// inputs/heat_output.ini as a regression case: it runs as is (output redirected) and
// writes the series it documents, with a small error.
TEST_F(IoTest, ExampleOutputDeckRuns) {
  const std::string out = (dir_ / "out").string();
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/heat_output.ini --set solver.backend=cpu "
                        "--set output.dir=" + out);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("L2 error     "), std::string::npos);
  const std::string xdmf = slurp(out + "/snapshots.xdmf");
  for (const char* step : {"000000", "000004", "000008", "000012", "000016", "000020"})
    EXPECT_NE(xdmf.find(std::string("h5/snapshot_") + step + ".h5:/u"), std::string::npos) << step;
  EXPECT_TRUE(fs::exists(out + "/vtk/snapshot_000020.vti"));
  EXPECT_EQ(io::read_checkpoint(out + "/checkpoint.h5").step, 20);
  const double l2 = std::stod(o.out.substr(o.out.find("L2 error") + 8));
  EXPECT_LT(l2, 1e-5) << o.out;
}

}  // namespace
}  // namespace adi3d::test
