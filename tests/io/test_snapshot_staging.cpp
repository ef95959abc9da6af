// Snapshots through the staging buffers (issue 38, output that keeps up): what is written
// is each step's field bit for bit (float output converted by HDF5 alone), compression
// changes the layout and not one value, a slow writer makes stepping wait with one warning
// while the staging buffers stay within their bound, and the pool reuses its buffers.
#include "app/snapshot_pipeline.hpp"
#include "app/staging_pool.hpp"
#include "io/hdf5_handles.hpp"
#include "io/hdf5_layout.hpp"
#include "io_fixtures.hpp"
#include "pipeline_fixtures.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <sstream>
#include <thread>

namespace adi3d::test {
namespace {

using io::h5::Handle;

struct StoredField {
  std::vector<float> f32;
  std::vector<double> f64;
  H5D_layout_t layout;
  int filters;
};

StoredField read_stored(const std::string& h5, long step, const std::string& name, const Grid3& g, bool single) {
  io::h5::Hdf5Lock lock;
  Handle file = io::h5::open_file(h5, false);
  Handle group = io::h5::open_group(file, "snapshots/" + io::snapshot_label(step), h5);
  StoredField s;
  EXPECT_EQ(io::h5::dataset_float_size(group, name, h5), single ? 4 : 8);
  io::h5::read_field(group, name, g, single, &s.f32, &s.f64, h5);
  Handle set(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose, h5, "open");
  Handle dcpl(H5Dget_create_plist(set), H5Pclose, h5, "plist");
  s.layout = H5Pget_layout(dcpl);
  s.filters = H5Pget_nfilters(dcpl);
  return s;
}

class StagedSnapshots : public IoTest, public ::testing::WithParamInterface<const char*> {};

// Every step's u and error, written through the staging buffers by the real HDF5 writer,
// read back equal to the field the step left (float output: its float rounding), whatever
// output.compression says; the dataset is contiguous without compression and chunked and
// filtered with it.
TEST_P(StagedSnapshots, RoundTripExactlyWithAndWithoutCompression) {
  const std::string compression = GetParam();
  std::string why;
  if (compression == "szip" && !io::parse_compression("szip", &why))
    GTEST_SKIP() << "this HDF5 has no szip encoder";
  for (const bool single : {false, true}) {
    const std::string out = (dir_ / (single ? "f32" : "f64")).string();
    InProcess p(write_deck(moving_deck(out)),
                {"output.every=3", "output.compression=" + compression,
                 std::string("output.precision=") + (single ? "float" : "same")});
    fs::create_directories(out);
    auto pipeline = app::SnapshotPipeline<double>::for_run(p.config, p.problem);
    Capture capture(*pipeline, p.config.grid.size());
    app::run_heat(p.config, p.problem, *p.backend, false, &capture);
    const Grid3& g = p.config.grid;
    const std::string h5 = out + "/snapshots.h5";
    for (const long step : {0L, 3L, 6L, 9L, 10L}) {
      const std::vector<double>& want = capture.fields.at(step);
      const StoredField u = read_stored(h5, step, "u", g, single);
      if (single) {
        ASSERT_EQ(u.f32.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(u.f32[i], static_cast<float>(want[i])) << i;
      } else {
        ASSERT_EQ(u.f64, want) << compression << " step " << step;
      }
      EXPECT_EQ(u.layout, compression == "none" ? H5D_CONTIGUOUS : H5D_CHUNKED);
      EXPECT_EQ(u.filters, compression == "none" ? 0 : compression == "szip" ? 1 : 2);  // gzip: shuffle + deflate
      const StoredField error = read_stored(h5, step, "error", g, single);
      EXPECT_EQ(error.f32.size() + error.f64.size(), g.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Compression, StagedSnapshots, ::testing::Values("none", "gzip", "gzip:6", "szip"));

// Compressed and uncompressed series of the same run hold the same values (read back
// through HDF5's filters), bit for bit.
TEST_F(IoTest, CompressionChangesNoValue) {
  std::map<std::string, std::vector<double>> last;
  for (const char* compression : {"none", "gzip:1", "gzip:9"}) {
    const std::string out = (dir_ / compression).string();
    const Outcome o = run("run " + write_deck(moving_deck(out)) + " --set output.every=5 --set output.compression=" +
                          compression);
    ASSERT_EQ(o.code, 0) << o.err;
    const Grid3 g = io::read_run_config(io::Deck::load((dir_ / "deck.ini").string())).grid;
    last[compression] = read_stored(out + "/snapshots.h5", 10, "u", g, false).f64;
  }
  EXPECT_EQ(last["gzip:1"], last["none"]);
  EXPECT_EQ(last["gzip:9"], last["none"]);
}

// The chunks of a compressed field are whole planes (several per chunk up to the target),
// or whole rows of a plane larger than the target.
TEST(FieldChunk, WholePlanesOrWholeRows) {
  Grid3 g;
  g.n = {1024, 1024, 1024};
  EXPECT_EQ(io::h5::field_chunk(g, 4), (std::array<hsize_t, 3>{4, 1024, 1024}));  // 4 planes of 4 MiB
  EXPECT_EQ(io::h5::field_chunk(g, 8), (std::array<hsize_t, 3>{2, 1024, 1024}));
  g.n = {9, 8, 7};
  EXPECT_EQ(io::h5::field_chunk(g, 8), (std::array<hsize_t, 3>{7, 8, 9}));  // the whole field
  g.n = {4096, 4096, 3};
  EXPECT_EQ(io::h5::field_chunk(g, 8), (std::array<hsize_t, 3>{1, 512, 4096}));  // 16 MiB of rows
}

// A contiguous field written in blocks of whole planes (here 2 planes and a last one of 1,
// double values stored as float32 by HDF5's conversion) reads back whole and in place.
TEST_F(IoTest, ContiguousFieldWrittenInBlocksReadsBackWhole) {
  Grid3 g;
  g.n = {9, 8, 7};
  const std::size_t plane = 9 * 8;
  std::vector<double> values(g.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * static_cast<double>(i) - 3;
  const std::string h5 = (dir_ / "blocks.h5").string();
  EXPECT_EQ(io::h5::planes_per_block(g, 4, 2 * plane * 4 + 5), 2u);
  {
    io::h5::Hdf5Lock lock;
    Handle file = io::h5::create_file(h5);
    const hsize_t dims[3] = {7, 8, 9};
    Handle space(H5Screate_simple(3, dims, nullptr), H5Sclose, h5, "space");
    Handle dcpl = io::h5::field_creation(g, 4, {}, h5);
    Handle set(H5Dcreate2(file, "u", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose, h5, "create");
    Handle dxpl = io::h5::field_transfer(true, false, h5);
    io::h5::write_contiguous(set, H5T_NATIVE_DOUBLE, values.data(), g, 4, dxpl, h5, "write", {}, 2 * plane * 4 + 5);
  }
  io::h5::Hdf5Lock lock;
  Handle file = io::h5::open_file(h5, false);
  std::vector<float> back;
  io::h5::read_field(file, "u", g, true, &back, nullptr, h5);
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(back[i], static_cast<float>(values[i])) << i;
}

// adi3d bench output (CPU here): the floor, then each compression's snapshot, as JSON.
TEST_F(IoTest, BenchOutputMeasuresTheFloorAndEachCompression) {
  const std::string json = (dir_ / "bench.json").string();
  const Outcome o = run("bench output --n 17 --backend cpu --precision double --compression none,gzip:1 --burst 2 "
                        "--dir " + (dir_ / "bench").string() + " --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = slurp(json);
  for (const char* key : {"\"floor\"", "\"ratio_to_floor\"", "\"percent_of_floor_bandwidth\"",
                          "\"stepping_waited_s\"", "\"compression\": \"gzip:1\"", "\"compression\": \"none\"",
                          "\"bytes\": 39304"})
    EXPECT_NE(text.find(key), std::string::npos) << key << "\n" << text;
  for (const char* left : {"snapshots.h5", "snapshots.xdmf", "h5"})  // it cleans up after itself
    EXPECT_FALSE(fs::exists(dir_ / "bench" / left)) << left;
  EXPECT_EQ(run("bench output --compression zstd --dir " + (dir_ / "bench").string()).code, 1);
  EXPECT_EQ(run("bench output --n 2").code, 2);
}

// Collects what spdlog logs while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  int count(const std::string& what) const {
    const std::string s = text_.str();
    int n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// Holds every write until `open` says so (at most 10 s), then hands it on.
class GatedWriter final : public io::SnapshotWriter {
 public:
  GatedWriter(std::unique_ptr<io::SnapshotWriter> next, std::function<bool()> open)
      : next_(std::move(next)), open_(std::move(open)) {}
  void write(const io::Snapshot& s) override {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!open_() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    next_->write(s);
  }
  std::string description() const override { return next_->description(); }

 private:
  std::unique_ptr<io::SnapshotWriter> next_;
  std::function<bool()> open_;
};

// A writer slower than the steps (it holds its first snapshot until stepping has waited
// for a staging buffer, whatever the machine's load): stepping waits and says so once,
// every snapshot still holds its step's field, and host memory stays at the pool's bound:
// two snapshots of u and error, 4 buffers, however many snapshots are due.
TEST_F(IoTest, SlowWriterMakesSteppingWaitOnceAndMemoryStaysBounded) {
  InProcess p(write_deck(moving_deck((dir_ / "out").string())), {"output.every=1"});
  fs::create_directories(p.config.output.dir);
  auto recorder = std::make_unique<SlowRecorder>(-1, std::chrono::milliseconds(5));
  SlowRecorder* rec = recorder.get();
  std::atomic<app::SnapshotPipeline<double>*> made{nullptr};
  std::vector<std::unique_ptr<io::SnapshotWriter>> writers;
  writers.push_back(std::make_unique<GatedWriter>(std::move(recorder), [&made] {
    const app::SnapshotPipeline<double>* pipeline = made.load();
    return pipeline && pipeline->staging().waits() > 0;
  }));
  app::SnapshotPipeline<double> pipeline(p.config, p.problem, std::move(writers), false, 8);
  made = &pipeline;
  Capture capture(pipeline, p.config.grid.size());
  LogCapture log;
  app::run_heat(p.config, p.problem, *p.backend, false, &capture);

  ASSERT_EQ(rec->got.size(), 11u);  // steps 0..10, each with u and error
  for (const auto& [step, u] : rec->got) EXPECT_EQ(u, capture.fields.at(step)) << "step " << step;
  EXPECT_EQ(log.count("the writer is behind"), 1) << log.text();
  EXPECT_EQ(log.count("stepping waits for it at step 2 (host staging bounded to 4 buffers"), 1) << log.text();
  EXPECT_GT(pipeline.writer_wait_seconds(), 0.0);
  EXPECT_GT(pipeline.staging().waits(), 0);
  EXPECT_EQ(pipeline.staging().capacity(), 4u);
  EXPECT_EQ(pipeline.staging().allocated(), 4u);
  EXPECT_EQ(pipeline.staging().peak_in_use(), 4u);
}

// A writer that keeps up (each snapshot written before the next is due): no wait, no
// warning, and one buffer serves every snapshot instead of one made per snapshot.
TEST_F(IoTest, WriterThatKeepsUpNeverWarns) {
  InProcess p(write_deck(moving_deck((dir_ / "out").string())), {"output.every=5", "output.fields=u"});
  fs::create_directories(p.config.output.dir);
  auto recorder = std::make_unique<SlowRecorder>(-1, std::chrono::milliseconds(0));
  SlowRecorder* rec = recorder.get();
  std::vector<std::unique_ptr<io::SnapshotWriter>> writers;
  writers.push_back(std::move(recorder));
  app::SnapshotPipeline<double> pipeline(p.config, p.problem, std::move(writers));
  Array<double> u = p.backend->allocate(p.config.grid.size());
  LogCapture log;
  for (long step = 0; step < 6; ++step) {
    p.backend->fill(u.data(), static_cast<double>(step), u.size());
    pipeline.snapshot(step, 0.1 * static_cast<double>(step), *p.backend, u.data());
    pipeline.finish();  // the writer is done before the next snapshot is due
  }
  EXPECT_EQ(log.count("the writer is behind"), 0) << log.text();
  EXPECT_EQ(pipeline.writer_wait_seconds(), 0.0);
  EXPECT_EQ(pipeline.staging().capacity(), 2u);  // u only
  EXPECT_EQ(pipeline.staging().allocated(), 1u);
  ASSERT_EQ(rec->got.size(), 6u);
  for (const auto& [step, values] : rec->got) EXPECT_EQ(values, std::vector<double>(values.size(), static_cast<double>(step))) << step;
}

// The pool: at most `capacity` buffers, reused; a third acquire waits until a buffer comes
// back (from another thread, as the writer gives it back, once the wait has begun), and
// is counted as a wait.
TEST(StagingPool, BoundsReusesAndWaitsForAReturn) {
  auto backend = make_cpu_backend<double>();
  app::StagingPool<double> pool(1000, 2);
  std::shared_ptr<double> a = pool.acquire(*backend);
  std::shared_ptr<double> b = pool.acquire(*backend);
  ASSERT_NE(a.get(), b.get());
  double* const first = a.get();
  a.get()[0] = 1;  // writable memory of the backend
  std::atomic<bool> warned{false};
  std::thread writer([&a, &pool] {
    while (pool.waits() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    a.reset();  // the writer is done with it, while the pool waits
  });
  std::shared_ptr<double> c = pool.acquire(*backend, [&] { warned = true; });
  writer.join();
  EXPECT_EQ(c.get(), first);  // the same memory again
  EXPECT_TRUE(warned);
  EXPECT_EQ(pool.waits(), 1);
  EXPECT_GT(pool.waited_seconds(), 0.0);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.peak_in_use(), 2u);
  EXPECT_EQ(pool.bytes_bound(), 2u * 1000 * sizeof(double));
  b.reset();
  c.reset();
  std::shared_ptr<double> d = pool.acquire(*backend);  // free again: no wait
  EXPECT_EQ(pool.waits(), 1);
}

}  // namespace
}  // namespace adi3d::test
