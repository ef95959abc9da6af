// adi3d bench adi, part "steps": one step of ours (DouglasStepper, the path users run),
// of the cuSPARSE Douglas step and of FTCS at each size and precision, on an n^3 unit
// cube with Dirichlet faces, alpha = 1, fresh random data; each against its bytes floor
// and a device copy timed in the same run. Checks: the cuSPARSE step against ours and
// FTCS against the backend's operator_rhs + axpy, relative to the size of the update.
#include "app/bench_adi.hpp"

#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/douglas_step.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace adi3d::app {
namespace {

template <class T>
Diffusion<T> unit_cube(int n) {
  Diffusion<T> d;
  for (int a = 0; a < 3; ++a) {
    d.grid.n[a] = n;
    d.grid.h[a] = 1.0 / (n - 1);
  }
  return d;  // Dirichlet faces, alpha 1
}

struct StepRow {
  const char* method;
  std::string variant;
  double ms;
  int arrays;  // bytes floor in grid-sized arrays
  double check = -1;  // relative difference of the check, -1: none
};

template <class T>
void print_and_store(int n, const char* precision, const StepRow& r, double copy_gbs, nlohmann::json& rows,
                     nlohmann::json extra = nlohmann::json::object()) {
  const double points = static_cast<double>(n) * n * n;
  const double bytes = floor_bytes(points, r.arrays, sizeof(T));
  const double gbs = bytes / (r.ms * 1e-3) * 1e-9;
  const double floor_ms = bytes / (copy_gbs * 1e9) * 1e3;
  std::printf("%5d %-7s %-9s %-44s %9.3f %8.3f %6d %9.3f %7.1f%%", n, precision, r.method, r.variant.c_str(), r.ms,
              r.ms * 1e6 / points, r.arrays, floor_ms, 100 * gbs / copy_gbs);
  if (r.check >= 0) std::printf("  %.1e", r.check);
  std::printf("\n");
  nlohmann::json row{{"n", n},
                     {"precision", precision},
                     {"method", r.method},
                     {"variant", r.variant},
                     {"ms", r.ms},
                     {"ns_per_point", r.ms * 1e6 / points},
                     {"arrays_floor", r.arrays},
                     {"bytes_floor", bytes},
                     {"floor_ms", floor_ms},
                     {"effective_gb_per_s", gbs},
                     {"percent_of_copy", 100 * gbs / copy_gbs}};
  if (r.check >= 0) row["check_relative_difference"] = r.check;
  row.update(extra);
  rows.push_back(row);
}

template <class T>
void step_rows_at(int n, const char* precision, int repetitions, nlohmann::json& rows, double& copy_gbs) {
  const Diffusion<T> d = unit_cube<T>(n);
  const std::size_t points = d.grid.size();
  // u0, u, v, copy target; the stepper's scratch; the cuSPARSE step's arrays.
  const std::size_t need = estimate_bytes(d.grid, 5, sizeof(T)) + cuda::CusparseDouglasStep<T>::estimate_bytes(d.grid);
  const std::size_t free_b = cuda_free_bytes(0);
  if (need > free_b) {
    std::printf("%5d %-7s skipped: needs %.1f GiB, %.1f GiB free\n", n, precision, static_cast<double>(need) / 1073741824.0,
                static_cast<double>(free_b) / 1073741824.0);
    return;
  }
  std::unique_ptr<Backend<T>> backend = make_cuda_backend<T>(0);
  Backend<T>& b = *backend;
  Array<T> u0 = b.allocate(points), u = b.allocate(points), v = b.allocate(points), c = b.allocate(points);
  cuda::fill_random(b, u0.data(), points, 1000u + static_cast<unsigned>(n) * 2 + sizeof(T), 0.5, 1.5);
  const double dt = d.grid.h[0], theta = 0.5;
  const T tau = static_cast<T>(theta * dt);

  // The anchor: more repetitions than the rest (it is cheap and every percentage uses it).
  const double copy_ms = cuda::median_ms(b, 3, std::max(repetitions, 50),
                                         [&] { cuda::device_copy(b, c.data(), u0.data(), points); });
  const double gbs = floor_bytes(static_cast<double>(points), 2, sizeof(T)) / (copy_ms * 1e-3) * 1e-9;
  if (sizeof(T) == 4) copy_gbs = gbs;  // the largest float size wins: sizes run in order
  print_and_store<T>(n, precision, {"copy", "cudaMemcpyAsync device to device", copy_ms, 2}, gbs, rows);

  // Ours: does the backend take the fused path here? (Runs one step on scratch data.)
  ZeroForcing<T> forcing;
  DouglasStepper<T> stepper(b, d, forcing, theta);
  cuda::device_copy(b, u.data(), u0.data(), points);
  const bool fused = b.fused_douglas_step(make_operator_view(d, nullptr), u.data(), nullptr, static_cast<T>(dt),
                                          tau, v.data());

  // Check: one step of each from the same data; difference over the size of the update.
  cuda::CusparseDouglasStep<T> cusparse(b, d, dt, theta);
  cuda::device_copy(b, u.data(), u0.data(), points);
  stepper.step(u.data(), 0.0, dt);
  cuda::device_copy(b, v.data(), u0.data(), points);
  cusparse.step(v.data());
  const double step_check =
      b.difference_norms(u.data(), v.data(), points).max_abs / b.difference_norms(u.data(), u0.data(), points).max_abs;

  cuda::device_copy(b, u.data(), u0.data(), points);
  double t = 0;
  auto ours_step = [&] {
    stepper.step(u.data(), t, dt);
    t += dt;
  };
  const double ours_ms = cuda::median_ms(b, 3, repetitions, ours_step);
  // A step timed alone: the host's work for it and the launch from an idle GPU included.
  const double alone_ms = cuda::median_ms(b, 0, repetitions, ours_step, 1);
  print_and_store<T>(n, precision,
                     {"ours", fused ? "DouglasStepper (fused: rhs+x, y, z+update)" : "DouglasStepper (unfused)",
                      ours_ms, 7, step_check},
                     gbs, rows, {{"fused", fused}, {"one_step_alone_ms", alone_ms}});
  std::printf("%5s %-7s %-9s   %-42s %9.3f\n", "", "", "", "one step alone (host work, launch from idle)", alone_ms);

  cuda::device_copy(b, v.data(), u0.data(), points);
  const double cusparse_ms = cuda::median_ms(b, 3, repetitions, [&] { cusparse.step(v.data()); });
  nlohmann::json stages = nlohmann::json::array();
  for (int s = 0; s < cusparse.stage_count(); ++s) {
    const double ms = cuda::median_ms(b, 2, repetitions, [&] { cusparse.run_stage(s, v.data()); });
    stages.push_back({{"stage", cusparse.stage_name(s)}, {"ms", ms}});
  }
  // The alternative to the permutation, not part of the step: y lines plane by plane.
  const double per_plane_ms = cuda::median_ms(b, 2, repetitions, [&] { cusparse.solve_y_per_plane(v.data()); });
  stages.push_back({{"stage", "not in the step: y lines per z plane (nz calls, batch nx)"}, {"ms", per_plane_ms}});
  print_and_store<T>(n, precision, {"cusparse", "gtsv2StridedBatch x, gtsvInterleavedBatch y z", cusparse_ms, 7,
                                    step_check},
                     gbs, rows, {{"stages", stages}, {"rebuilt_each_step", cusparse.rebuilt_each_step()}});
  for (const auto& s : stages)
    std::printf("%5s %-7s %-9s   %-42s %9.3f\n", "", "", "", s["stage"].get<std::string>().c_str(),
                s["ms"].get<double>());

  // FTCS at its stability limit; checked against r = dt A u0 (operator_rhs), r += u0.
  const double dt_explicit = cuda::FtcsStep<T>::stable_dt(d);
  cuda::FtcsStep<T> ftcs(b, d, dt_explicit);
  ftcs.step(u0.data(), u.data());
  b.operator_rhs(make_operator_view(d, nullptr), u0.data(), nullptr, FaceData<T>{}, static_cast<T>(dt_explicit),
                 v.data());
  b.axpy(T(1), u0.data(), v.data(), points);
  const double ftcs_check =
      b.difference_norms(u.data(), v.data(), points).max_abs / b.difference_norms(v.data(), u0.data(), points).max_abs;
  cuda::device_copy(b, u.data(), u0.data(), points);
  T* from = u.data();
  T* to = v.data();
  const double ftcs_ms = cuda::median_ms(b, 3, repetitions, [&] {
    ftcs.step(from, to);
    std::swap(from, to);
  });
  print_and_store<T>(n, precision, {"ftcs", "explicit Z-pencil kernel, dt = h^2/6", ftcs_ms, 2, ftcs_check}, gbs,
                     rows);
  b.synchronize();
}

}  // namespace

nlohmann::json adi_step_rows(const AdiBenchConfig& config, double& copy_gbs) {
  std::printf("\nOne step, n^3 unit cube, Dirichlet faces; floor = arrays x points x bytes / copy bandwidth; "
              "check = max |difference| / max |update| (cuSPARSE vs ours; FTCS vs operator_rhs + axpy)\n");
  std::printf("%5s %-7s %-9s %-44s %9s %8s %6s %9s %8s  %s\n", "n", "prec", "method", "variant", "ms", "ns/pt",
              "arrays", "floor ms", "of copy", "check");
  nlohmann::json rows = nlohmann::json::array();
  for (int n : config.step_sizes) {
    if (config.step_precision != "double") step_rows_at<float>(n, "float", config.repetitions, rows, copy_gbs);
    if (config.step_precision != "float") step_rows_at<double>(n, "double", config.repetitions, rows, copy_gbs);
  }
  return rows;
}

}  // namespace adi3d::app
