// adi3d bench scaling (under mpirun): the Douglas step of a z-slab run on every rank of
// the launch, weak (n x n x P n: n^3 points per rank) or strong (n^3 over all ranks),
// float and double, constant alpha, Dirichlet faces, random non-zero data. Per step: the
// median wall time of the whole step (ranks in step: a barrier before each), and, from as
// many steps again with the exchanges timed (a synchronisation around each), its split
// into the ghost-plane exchanges, the reduced systems of the z lines (exchange and solve;
// the fused slab step runs them beside its y pass, and waits only for what is left of
// them when it ends), and the rest (the kernels). scripts/scaling runs it on 1, 2 and 4 ranks and works out
// the efficiencies; docs/scaling.md models the split.
#include "app/bench.hpp"
#include "app/commands.hpp"
#include "solvers/distributed/distributed_backend.hpp"
#include "solvers/distributed/mpi_session.hpp"
#include "solvers/douglas_step.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

namespace po = boost::program_options;

namespace adi3d::app {
namespace {

struct ScalingOptions {
  std::string mode = "weak";
  int n = 512;
  int steps = 20;
  std::vector<std::string> precisions{"float", "double"};
  std::string backend = "auto";
};

template <class T>
nlohmann::json time_steps(const ScalingOptions& o, MpiSession& mpi) {
  Communicator& comm = mpi.world();
  const int ranks = comm.size();
  Grid3 whole;
  whole.n = {o.n, o.n, o.mode == "weak" ? o.n * ranks : o.n};
  for (int a = 0; a < 3; ++a) whole.h[a] = 1.0 / (whole.n[a] - 1);
  const BoundarySpec bc;  // Dirichlet all round
  Diffusion<T> d;
  d.slab = decompose_slabs(whole, bc, comm.rank(), ranks);
  d.grid = d.slab.local;
  d.bc = d.slab.local_bc;
  const bool gpu = o.backend == "cuda" || (o.backend == "auto" && cuda_device_count() >= mpi.local_size());
  std::unique_ptr<Backend<T>> backend = gpu ? make_cuda_backend<T>(mpi.local_rank()) : make_cpu_backend<T>();
  DistributedBackend<T>* distributed = nullptr;
  if (d.slab.distributed()) {
    auto wrapped = std::make_unique<DistributedBackend<T>>(std::move(backend), d.slab, comm);
    distributed = wrapped.get();
    backend = std::move(wrapped);
  }
  std::vector<T> host(d.grid.size());
  std::mt19937 rng(17u + static_cast<unsigned>(comm.rank()));
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  for (T& v : host) v = static_cast<T>(uniform(rng));
  Array<T> u = backend->allocate(host.size());
  backend->upload(host.data(), u.data(), host.size());
  ZeroForcing<T> forcing;
  DouglasStepper<T> stepper(*backend, d, forcing, 0.5);
  const double dt = 0.5 * whole.h[0];
  // The step's time with nothing timed inside it; then, where distributed, the same steps
  // with the exchanges timed (a synchronisation around each, which the split needs).
  std::vector<double> step_ms, timed_ms, halo_ms, reduced_ms, waiting_ms, sums_ms;
  for (int timed = 0; timed < (distributed ? 2 : 1); ++timed) {
    if (distributed) distributed->set_timing(timed == 1);
    for (int s = -3; s < o.steps; ++s) {  // 3 warm-up steps: first exchanges, factors, page faults
      const CommunicationTimes before = distributed ? distributed->times() : CommunicationTimes{};
      comm.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      stepper.step(u.data(), 0.0, dt);
      backend->synchronize();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (s < 0) continue;
      if (!timed) {
        step_ms.push_back(ms);
        continue;
      }
      const CommunicationTimes after = distributed->times();
      timed_ms.push_back(ms);
      halo_ms.push_back(1e3 * (after.halo - before.halo));
      reduced_ms.push_back(1e3 * (after.reduced - before.reduced));
      waiting_ms.push_back(1e3 * (after.waiting - before.waiting));
      sums_ms.push_back(1e3 * (after.sums - before.sums));
    }
  }
  // The slowest rank's median sets the pace.
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double values[6] = {median(step_ms),    median(timed_ms), median(halo_ms),
                       median(reduced_ms), median(waiting_ms), median(sums_ms)};
  comm.allreduce_max(values, 6);
  const bool slab_step = distributed && distributed->last_step_fused_slab();
  return {{"mode", o.mode},
          {"ranks", ranks},
          {"n", o.n},
          {"grid", {whole.n[0], whole.n[1], whole.n[2]}},
          {"precision", std::is_same_v<T, float> ? "float" : "double"},
          {"backend", gpu ? "cuda" : "cpu"},
          {"transport", distributed ? distributed->transport() : "none"},
          {"step_path", stepper.fused_steps() == 0 ? "operation by operation"
                        : slab_step              ? "fused slab step (reduced systems beside the y pass)"
                        : distributed            ? "rhs, x, y, partitioned z + update"
                                                 : "fused"},
          {"step_ms", values[0]},
          {"timed_step_ms", values[1]},
          {"halo_ms", values[2]},
          {"reduced_ms", values[3]},
          {"waiting_ms", values[4]},
          {"slab_sums_ms", values[5]},
          {"compute_ms", (distributed ? values[1] : values[0]) - values[2] - values[4]},
          {"points_per_rank", static_cast<double>(whole.size()) / ranks}};
}

}  // namespace

int bench_scaling(const std::vector<std::string>& args, MpiSession& mpi) {
  ScalingOptions o;
  std::string json;
  po::options_description visible("adi3d bench scaling (run it under mpirun -np P)");
  visible.add_options()("help,h", "show this help")(
      "mode", po::value<std::string>(&o.mode)->default_value(o.mode), "weak (n^3 per rank) or strong (n^3 in all)")(
      "size", po::value<int>(&o.n)->default_value(o.n), "n")(
      "steps", po::value<int>(&o.steps)->default_value(o.steps), "timed steps (median)")(
      "precision", po::value<std::vector<std::string>>(&o.precisions)->multitoken(), "float and/or double")(
      "backend", po::value<std::string>(&o.backend)->default_value(o.backend), "auto, cpu or cuda")(
      "json", po::value<std::string>(&json), "write the rows as JSON (rank 0)");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      if (mpi.rank() == 0) std::cout << visible;
      return kExitOk;
    }
    if (o.mode != "weak" && o.mode != "strong") throw po::error("--mode must be weak or strong");
    if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda") throw po::error("--backend must be auto, cpu or cuda");
    if (o.n < 3 || o.steps < 1) throw po::error("--size must be >= 3 and --steps >= 1");
    for (const std::string& p : o.precisions)
      if (p != "float" && p != "double") throw po::error("--precision takes float and double");
  } catch (const po::error& e) {
    if (mpi.rank() == 0) std::cerr << "adi3d bench scaling: " << e.what() << "\n";
    return kExitUsage;
  }
  nlohmann::json rows = nlohmann::json::array();
  if (mpi.rank() == 0)
    std::printf("%6s %5s %16s %7s %9s %9s %9s %9s %9s %9s  %s\n", "mode", "ranks", "grid", "prec", "step ms",
                "timed", "halo", "reduced", "waiting", "compute", "path");
  for (const std::string& p : o.precisions) {
    const nlohmann::json row = p == "float" ? time_steps<float>(o, mpi) : time_steps<double>(o, mpi);
    rows.push_back(row);
    if (mpi.rank() == 0)
      std::printf("%6s %5d %16s %7s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f  %s, %s\n", o.mode.c_str(), mpi.size(),
                  fmt::format("{}x{}x{}", row["grid"][0].get<int>(), row["grid"][1].get<int>(),
                              row["grid"][2].get<int>()).c_str(),
                  p.c_str(), row["step_ms"].get<double>(), row["timed_step_ms"].get<double>(),
                  row["halo_ms"].get<double>(), row["reduced_ms"].get<double>(), row["waiting_ms"].get<double>(),
                  row["compute_ms"].get<double>(),
                  row["step_path"].get<std::string>().c_str(), row["transport"].get<std::string>().c_str());
  }
  if (mpi.rank() == 0) {
    BenchOptions options;
    options.json_path = json;
    options.command_line = "adi3d bench scaling";
    for (const std::string& a : args) options.command_line += " " + a;
    write_bench_json(options, "scaling", {{"rows", rows}});
  }
  return kExitOk;
}

}  // namespace adi3d::app
