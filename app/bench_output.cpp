// adi3d bench output: how fast a snapshot leaves the run, against what the disk can do,
// measured in the same run on the same disk (issue 38 item 2: HDF5 at >= 80% of the disk's
// sequential bandwidth; item 5: a 1024^3 float snapshot of u in <= 1.25x the dd time).
//
//   floor      the snapshot's bytes written sequentially to the output directory in
//              64 MiB writes, then fsync: what `dd bs=64M conv=fsync` measures (twice; the
//              faster is the floor)
//   snapshot   one snapshot of u (backend memory; on the GPU for a CUDA backend) through
//              the real pipeline (staging, writer thread, HDF5, fsync, XDMF), from the
//              call to the end of the write, after a first snapshot that made the staging
//              buffers (its time is reported too: a run pays it once)
//   burst      --burst snapshots queued as fast as stepping could (--gap-ms of "stepping"
//              between them): the writer's sustained pace, and how long stepping waited
// with each --compression in turn (the same field; the compressed file's size gives the ratio).
#include "app/bench.hpp"
#include "app/commands.hpp"
#include "app/snapshot_pipeline.hpp"
#include "io/hdf5_snapshots.hpp"

#include <boost/program_options.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace adi3d::app {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct OutputBenchOptions {
  int n = 512;
  std::string precision = "float", backend = "auto", dir = "bench_output";
  std::vector<std::string> compressions;
  int burst = 3;
  double gap_ms = 0;
};

// `bytes` written to `path` in 64 MiB writes of non-zero data, then fsync: the disk's
// sequential floor, as dd bs=64M conv=fsync measures it. Seconds from open to fsync's end.
double sequential_write_floor(const std::string& path, std::size_t bytes) {
  constexpr std::size_t kBlock = 64u << 20;
  std::vector<unsigned char> block(kBlock);
  for (std::size_t i = 0; i < kBlock; ++i) block[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  const Clock::time_point start = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": open failed: " + std::strerror(errno));
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t want = std::min(kBlock, bytes - done);
    const ssize_t wrote = ::write(fd, block.data(), want);
    if (wrote <= 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": write failed: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(wrote);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw std::runtime_error(path + ": fsync failed: " + std::strerror(errno));
  return since(start);
}

// u = sin(pi x) sin(pi y) sin(pi z) + 1, a smooth field as a run writes (what compression
// sees matters), uploaded plane by plane so the host never holds the whole field.
template <class T>
Array<T> smooth_field(Backend<T>& backend, const Grid3& g) {
  Array<T> u = backend.allocate(g.size());
  const std::size_t plane = static_cast<std::size_t>(g.n[0]) * g.n[1];
  std::vector<double> sx(g.n[0]), sy(g.n[1]);
  for (int i = 0; i < g.n[0]; ++i) sx[i] = std::sin(M_PI * g.coord(0, i));
  for (int j = 0; j < g.n[1]; ++j) sy[j] = std::sin(M_PI * g.coord(1, j));
  std::vector<T> values(plane);
  for (int k = 0; k < g.n[2]; ++k) {
    const double sz = std::sin(M_PI * g.coord(2, k));
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) values[i + static_cast<std::size_t>(g.n[0]) * j] = static_cast<T>(sx[i] * sy[j] * sz + 1);
    backend.upload(values.data(), u.data() + plane * k, plane);
  }
  return u;
}

template <class T>
nlohmann::json snapshot_row(const OutputBenchOptions& o, const std::string& compression, Backend<T>& backend,
                            const T* u, const io::RunConfig& base, double floor_s) {
  io::RunConfig config = base;
  std::string why;
  const std::optional<io::Compression> c = io::parse_compression(compression, &why);
  if (!c) throw std::runtime_error("--compression " + compression + ": " + why);
  config.output.compression = *c;
  ProblemSetup<T> problem;
  problem.diffusion.grid = config.grid;
  const std::size_t bytes = config.grid.size() * sizeof(T);
  auto pipeline = SnapshotPipeline<T>::for_run(config, problem);

  Clock::time_point start = Clock::now();
  pipeline->snapshot(0, 0.0, backend, u);  // makes the staging buffers
  pipeline->finish();
  const double first_s = since(start);

  start = Clock::now();
  pipeline->snapshot(1, 1.0, backend, u);
  const double blocked_s = since(start);  // what stepping lost to this snapshot
  pipeline->finish();
  const double snapshot_s = since(start);
  const std::uintmax_t stored = fs::file_size(fs::path(config.output.dir) / io::snapshot_file_name(1));

  const double waited_before = pipeline->writer_wait_seconds();
  start = Clock::now();
  for (int s = 0; s < o.burst; ++s) {
    if (s > 0 && o.gap_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.gap_ms));
    pipeline->snapshot(2 + s, 2.0 + s, backend, u);
  }
  pipeline->finish();
  const double burst_s = since(start);
  const double waited_s = pipeline->writer_wait_seconds() - waited_before;
  pipeline.reset();
  // The series it wrote goes: the disk space for the next row, and nothing left behind.
  const fs::path dir = config.output.dir;
  fs::remove_all(dir / "h5");
  for (const char* index : {"snapshots.h5", "snapshots.xdmf"}) fs::remove(dir / index);

  const double gb = static_cast<double>(bytes) * 1e-9;
  return {{"compression", io::to_string(*c)},
          {"first_snapshot_s", first_s},
          {"snapshot_s", snapshot_s},
          {"snapshot_gb_per_s", gb / snapshot_s},
          {"ratio_to_floor", snapshot_s / floor_s},
          {"percent_of_floor_bandwidth", 100 * floor_s / snapshot_s},
          {"stepping_blocked_s", blocked_s},
          {"stored_bytes", stored},
          {"compression_ratio", static_cast<double>(bytes) / static_cast<double>(stored)},
          {"burst", {{"snapshots", o.burst},
                     {"gap_ms", o.gap_ms},
                     {"seconds", burst_s},
                     {"gb_per_s", gb * o.burst / burst_s},
                     {"stepping_waited_s", waited_s}}}};
}

template <class T>
int run_output_bench(const OutputBenchOptions& o, BenchOptions& options) {
  const bool cuda = o.backend == "cuda" || (o.backend == "auto" && cuda_device_count() > 0);
  const std::unique_ptr<Backend<T>> backend = cuda ? make_cuda_backend<T>(0) : make_cpu_backend<T>();
  io::RunConfig config;
  for (int a = 0; a < 3; ++a) {
    config.grid.n[a] = o.n;
    config.grid.h[a] = 1.0 / (o.n - 1);
  }
  config.precision = std::is_same_v<T, float> ? io::Precision::f32 : io::Precision::f64;
  config.output.dir = o.dir;
  config.output.hdf5 = true;
  config.output.fields = {"u"};
  config.deck_text = "# adi3d bench output\n";
  fs::create_directories(o.dir);
  const std::size_t bytes = config.grid.size() * sizeof(T);

  const Array<T> u = smooth_field(*backend, config.grid);
  backend->synchronize();
  const std::string floor_path = (fs::path(o.dir) / "bench_output_floor.bin").string();
  const auto measure_floor = [&] {
    const double s = sequential_write_floor(floor_path, bytes);
    fs::remove(floor_path);
    return s;
  };
  // Twice, and the faster counts: the ratio is then against the disk at its best.
  const std::vector<double> floors{measure_floor(), measure_floor()};
  const double floor_s = std::min(floors[0], floors[1]);
  const double gb = static_cast<double>(bytes) * 1e-9;
  std::printf("output: %d^3 %s (%.2f GB) from %s to %s\n", o.n, o.precision.c_str(), gb,
              backend->description().c_str(), fs::absolute(o.dir).c_str());
  std::printf("floor: sequential 64 MiB writes + fsync: %.2f s and %.2f s, %.2f GB/s at best\n", floors[0], floors[1],
              gb / floor_s);
  std::printf("%-8s %9s %9s %9s %9s %9s %9s %7s %10s %10s\n", "compress", "first s", "snap s", "GB/s", "x floor",
              "% floor", "blocked s", "ratio", "burst GB/s", "waited s");
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& compression : o.compressions) {
    const nlohmann::json r = snapshot_row(o, compression, *backend, u.data(), config, floor_s);
    std::printf("%-8s %9.2f %9.2f %9.2f %9.2f %9.1f %9.3f %7.2f %10.2f %10.2f\n",
                r["compression"].get<std::string>().c_str(), r["first_snapshot_s"].get<double>(),
                r["snapshot_s"].get<double>(), r["snapshot_gb_per_s"].get<double>(), r["ratio_to_floor"].get<double>(),
                r["percent_of_floor_bandwidth"].get<double>(), r["stepping_blocked_s"].get<double>(),
                r["compression_ratio"].get<double>(), r["burst"]["gb_per_s"].get<double>(),
                r["burst"]["stepping_waited_s"].get<double>());
    std::fflush(stdout);
    rows.push_back(r);
  }
  const nlohmann::json payload{
      {"device", cuda ? cuda_device_summary() : std::string("cpu")},
      {"backend", backend->description()},
      {"n", o.n},
      {"precision", o.precision},
      {"bytes", bytes},
      {"dir", fs::absolute(o.dir).string()},
      {"floor", {{"method", "64 MiB write() calls of non-zero data, then fsync (dd bs=64M conv=fsync)"},
                 {"seconds", floor_s},
                 {"seconds_runs", floors},
                 {"gb_per_s", gb / floor_s}}},
      {"timing", "snapshot_s: from SnapshotPipeline::snapshot() to the end of finish() (download, HDF5 write, "
                 "fsync, XDMF), after a first snapshot that allocated the staging buffers (first_snapshot_s); "
                 "stepping_blocked_s: the snapshot() call alone; burst: snapshots queued back to back"},
      {"rows", rows}};
  write_bench_json(options, "output", payload);
  return kExitOk;
}

}  // namespace

int bench_output(const std::vector<std::string>& args) {
  BenchOptions options;
  OutputBenchOptions o;
  std::string compressions = "none,gzip:1";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "n", po::value<int>(&o.n)->default_value(o.n), "nodes per axis (1024: the 4.3 GB float field of issue 38)")(
      "precision", po::value<std::string>(&o.precision)->default_value(o.precision), "float or double")(
      "backend", po::value<std::string>(&o.backend)->default_value(o.backend), "auto, cuda or cpu")(
      "dir", po::value<std::string>(&o.dir)->default_value(o.dir), "output directory (on the disk to measure)")(
      "compression", po::value<std::string>(&compressions)->default_value(compressions),
      "comma-separated output.compression values, each measured")(
      "burst", po::value<int>(&o.burst)->default_value(o.burst), "snapshots queued back to back")(
      "gap-ms", po::value<double>(&o.gap_ms)->default_value(o.gap_ms), "stepping time between burst snapshots")(
      "json", po::value<std::string>(&options.json_path), "write results as JSON to this file");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: adi3d bench output [options]\n\n"
                   "A snapshot of u through the real pipeline (staging, writer thread, HDF5, fsync) against\n"
                   "the same bytes written sequentially and fsynced (dd's floor), on the same disk, in the\n"
                   "same run; with each compression; and a burst of snapshots: how long stepping waits.\n\n"
                << visible;
      return kExitOk;
    }
    if (o.n < 3) throw po::error("--n must be >= 3");
    if (o.precision != "float" && o.precision != "double") throw po::error("--precision must be float or double");
    if (o.backend != "auto" && o.backend != "cuda" && o.backend != "cpu")
      throw po::error("--backend must be auto, cuda or cpu");
    if (o.burst < 1) throw po::error("--burst must be >= 1");
    std::istringstream list(compressions);
    for (std::string c; std::getline(list, c, ',');)
      if (!c.empty()) o.compressions.push_back(c);
    if (o.compressions.empty()) throw po::error("--compression names none");
  } catch (const po::error& e) {
    std::cerr << "adi3d bench output: " << e.what() << "\n";
    return kExitUsage;
  }
  if (o.backend == "cuda" && cuda_device_count() == 0) {
    std::cerr << "adi3d bench output: --backend cuda needs a CUDA device: " << cuda_device_summary() << "\n";
    return kExitRuntime;
  }
  options.command_line = "adi3d bench output";
  for (const std::string& a : args) options.command_line += " " + a;
  try {
    return o.precision == "float" ? run_output_bench<float>(o, options) : run_output_bench<double>(o, options);
  } catch (const std::exception& e) {
    std::cerr << "adi3d bench output: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace adi3d::app
