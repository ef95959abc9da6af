// adi3d bench gpu: every stencil variant, line solver per axis and one Douglas step of the
// CUDA backend at each size and precision, against a device-to-device copy measured in the
// same run: ms, Gpoints/s, effective GB/s (bytes that must move / time) and percent of the
// copy bandwidth.
#include "app/bench.hpp"

#include "solvers/backend.hpp"
#include "solvers/bench/adi_bench.hpp"
#include "solvers/bench/gpu_bench.hpp"

#include <cstdio>

namespace adi3d::app {
namespace {

template <class T>
void bench_precision(int n, int repetitions, const char* precision, nlohmann::json& rows) {
  const std::vector<cuda::OpTiming> timings = cuda::time_backend_ops<T>(n, repetitions);
  const double points = static_cast<double>(n) * n * n;
  double copy_gbs = 0;
  for (const cuda::OpTiming& t : timings)
    if (t.op == "copy") copy_gbs = t.bytes / (t.ms * 1e-3) * 1e-9;
  for (const cuda::OpTiming& t : timings) {
    const double gbs = t.bytes / (t.ms * 1e-3) * 1e-9;
    const double gpts = points / (t.ms * 1e-3) * 1e-9;
    std::printf("%5d %-7s %-13s %-32s %9.3f %9.2f %9.0f %7.1f%%\n", n, precision, t.op.c_str(),
                t.variant.c_str(), t.ms, gpts, gbs, 100 * gbs / copy_gbs);
    rows.push_back({{"n", n},
                    {"precision", precision},
                    {"op", t.op},
                    {"variant", t.variant},
                    {"ms", t.ms},
                    {"gpoints_per_s", gpts},
                    {"bytes", t.bytes},
                    {"effective_gb_per_s", gbs},
                    {"percent_of_copy", 100 * gbs / copy_gbs}});
  }
}

}  // namespace

int bench_gpu(const BenchOptions& options) {
  if (cuda_device_count() == 0) {
    std::fprintf(stderr, "adi3d bench gpu: %s\n", cuda_device_summary().c_str());
    return 1;
  }
  std::printf("%s; median of %d timings of %d calls back to back (per call) after warm-up, CUDA events\n",
              cuda_device_summary().c_str(), options.repetitions, cuda::kCallsPerTiming);
  std::printf("%5s %-7s %-13s %-32s %9s %9s %9s %8s\n", "n", "prec", "op", "variant", "ms", "Gpt/s",
              "GB/s", "of copy");
  nlohmann::json rows = nlohmann::json::array();
  for (int n : options.sizes) {
    bench_precision<float>(n, options.repetitions, "float", rows);
    bench_precision<double>(n, options.repetitions, "double", rows);
  }
  write_bench_json(options, "gpu", {{"device", cuda_device_summary()}, {"rows", rows}});
  return 0;
}

}  // namespace adi3d::app
