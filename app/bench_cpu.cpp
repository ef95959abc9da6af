// adi3d bench cpu: one Douglas step (double, Dirichlet faces, constant alpha) with the CPU
// backend's line solves, against the same step with LAPACK dgtsv per line, in one run.
// Each is timed after a warm-up step as the median of several steps on fresh random data.
#include "app/bench.hpp"

#include "solvers/cpu/lapack_line_solves.hpp"
#include "solvers/douglas_step.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

namespace adi3d::app {
namespace {

struct StepTiming {
  double median_ms;
  std::vector<double> field;  // the result, for the cross-check
};

StepTiming time_steps(Backend<double>& backend, const Diffusion<double>& d, const std::vector<double>& u0,
                      int steps) {
  ZeroForcing<double> forcing;
  DouglasStepper<double> stepper(backend, d, forcing, 0.5);
  Array<double> u = backend.allocate(d.grid.size());
  backend.upload(u0.data(), u.data(), u0.size());
  std::vector<double> times;
  const double dt = 0.5 * d.grid.h[0];
  for (int s = 0; s <= steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    stepper.step(u.data(), s * dt, dt);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (s > 0) times.push_back(ms);  // step 0 warms caches, page-faults the arrays, factors lines
  }
  std::sort(times.begin(), times.end());
  StepTiming t{times[times.size() / 2], std::vector<double>(u0.size())};
  backend.download(u.data(), t.field.data(), u0.size());
  return t;
}

}  // namespace

int bench_cpu(const BenchOptions& options) {
  nlohmann::json rows = nlohmann::json::array();
  std::printf("CPU Douglas step, double, Dirichlet faces, constant alpha, %d OpenMP threads; median of %d steps\n",
              omp_get_max_threads(), options.repetitions);
  std::printf("%8s %14s %14s %14s %12s %10s\n", "n", "ours ms", "dgtsv ms", "ours Mpt/s", "speed-up", "max diff");
  for (int n : options.sizes) {
    Diffusion<double> d;
    for (int a = 0; a < 3; ++a) {
      d.grid.n[a] = n;
      d.grid.h[a] = 1.0 / (n - 1);
    }
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> dist(0.5, 1.5);
    std::vector<double> u0(d.grid.size());
    for (double& v : u0) v = dist(rng);
    auto ours = make_cpu_backend<double>();
    auto lapack = cpu::make_lapack_line_backend();
    const StepTiming a = time_steps(*ours, d, u0, options.repetitions);
    const StepTiming b = time_steps(*lapack, d, u0, options.repetitions);
    double diff = 0;
    for (std::size_t p = 0; p < u0.size(); ++p) diff = std::max(diff, std::fabs(a.field[p] - b.field[p]));
    const double mpts = static_cast<double>(d.grid.size()) / (a.median_ms * 1e-3) * 1e-6;
    std::printf("%8d %14.2f %14.2f %14.1f %11.2fx %10.1e\n", n, a.median_ms, b.median_ms, mpts,
                b.median_ms / a.median_ms, diff);
    rows.push_back({{"n", n},
                    {"ours_ms", a.median_ms},
                    {"dgtsv_ms", b.median_ms},
                    {"ours_mpoints_per_s", mpts},
                    {"speedup", b.median_ms / a.median_ms},
                    {"max_difference", diff}});
  }
  write_bench_json(options, "cpu", {{"threads", omp_get_max_threads()}, {"rows", rows}});
  return 0;
}

}  // namespace adi3d::app
