// adi3d bench adi, part "scaling": ns per point per step of our step (DouglasStepper) and
// of FTCS, float, from small grids (cache-resident) to the largest that fit in free
// memory, each with a device copy of the same size as its bandwidth anchor.
#include "app/bench_adi.hpp"

#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/douglas_step.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace adi3d::app {

nlohmann::json adi_scaling_rows(const AdiBenchConfig& config) {
  using T = float;
  std::printf("\nScaling (float): ns per point per step; %% of copy against the bytes floor (ours 7 arrays, "
              "FTCS 2) and a copy of the same size\n");
  std::printf("%5s %12s %10s %10s %8s %10s %8s %s\n", "n", "points", "copy GB/s", "ours ns", "of copy", "FTCS ns",
              "of copy", "path");
  nlohmann::json rows = nlohmann::json::array();
  std::unique_ptr<Backend<T>> backend = make_cuda_backend<T>(0);
  Backend<T>& b = *backend;
  for (int n : config.scaling_sizes) {
    Diffusion<T> d;
    for (int a = 0; a < 3; ++a) {
      d.grid.n[a] = n;
      d.grid.h[a] = 1.0 / (n - 1);
    }
    const std::size_t points = d.grid.size();
    const double count = static_cast<double>(points);
    // u, v, copy target and the stepper's scratch, plus 10% for the fused step's factors
    // and the allocator.
    const std::size_t need = estimate_bytes(d.grid, 2, sizeof(T)) * 11 / 10;
    const std::size_t free_b = cuda_free_bytes(0);
    if (need > free_b) {
      std::printf("%5d skipped: needs %.1f GiB, %.1f GiB free\n", n, static_cast<double>(need) / 1073741824.0,
                  static_cast<double>(free_b) / 1073741824.0);
      rows.push_back({{"n", n}, {"skipped", "needs more memory than is free"}});
      continue;
    }
    Array<T> u = b.allocate(points), v = b.allocate(points), c = b.allocate(points);
    cuda::fill_random(b, u.data(), points, 2000u + static_cast<unsigned>(n), 0.5, 1.5);
    const double copy_ms = cuda::median_ms(b, 3, std::max(config.repetitions, 50),
                                           [&] { cuda::device_copy(b, c.data(), u.data(), points); });
    const double copy_gbs = floor_bytes(count, 2, sizeof(T)) / (copy_ms * 1e-3) * 1e-9;

    ZeroForcing<T> forcing;
    const double dt = d.grid.h[0];
    bool fused = false;
    double ours_ms = 0;
    {
      DouglasStepper<T> stepper(b, d, forcing, 0.5);
      fused = b.fused_douglas_step(make_operator_view(d, nullptr), u.data(), nullptr, static_cast<T>(dt),
                                   static_cast<T>(0.5 * dt), c.data());
      double t = 0;
      ours_ms = cuda::median_ms(b, 3, config.repetitions, [&] {
        stepper.step(u.data(), t, dt);
        t += dt;
      });
    }
    cuda::FtcsStep<T> ftcs(b, d, cuda::FtcsStep<T>::stable_dt(d));
    cuda::fill_random(b, u.data(), points, 3000u + static_cast<unsigned>(n), 0.5, 1.5);
    T* from = u.data();
    T* to = v.data();
    const double ftcs_ms = cuda::median_ms(b, 3, config.repetitions, [&] {
      ftcs.step(from, to);
      std::swap(from, to);
    });
    b.synchronize();

    const double ours_ns = ours_ms * 1e6 / count, ftcs_ns = ftcs_ms * 1e6 / count;
    const double ours_pct = 100 * floor_bytes(count, 7, sizeof(T)) / (ours_ms * 1e-3) * 1e-9 / copy_gbs;
    const double ftcs_pct = 100 * floor_bytes(count, 2, sizeof(T)) / (ftcs_ms * 1e-3) * 1e-9 / copy_gbs;
    std::printf("%5d %12zu %10.0f %10.3f %7.1f%% %10.3f %7.1f%% %s\n", n, points, copy_gbs, ours_ns, ours_pct,
                ftcs_ns, ftcs_pct, fused ? "fused" : "unfused");
    rows.push_back({{"n", n},
                    {"points", points},
                    {"precision", "float"},
                    {"copy_gb_per_s", copy_gbs},
                    {"ours_ms", ours_ms},
                    {"ours_ns_per_point", ours_ns},
                    {"ours_percent_of_copy", ours_pct},
                    {"ours_fused", fused},
                    {"ftcs_ms", ftcs_ms},
                    {"ftcs_ns_per_point", ftcs_ns},
                    {"ftcs_percent_of_copy", ftcs_pct},
                    {"floor_ns_per_point_ours", floor_bytes(1, 7, sizeof(T)) / copy_gbs},
                    {"floor_ns_per_point_ftcs", floor_bytes(1, 2, sizeof(T)) / copy_gbs}});
  }
  return rows;
}

}  // namespace adi3d::app
