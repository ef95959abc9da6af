// The tridiagonal benchmark and tuning driver (tridiag_bench.hpp): each row is the median
// time of >= 10 runs after warm-up (CUDA events), Gpoints/s, percent of the
// device-to-device copy bandwidth measured in this run (floor: 4 arrays read + 1 written
// per equation) and the relative residual ||Ax-d||/||d|| in double.
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/line_solves/cusparse_calls.cuh"
#include "solvers/cuda/common/event_timer.cuh"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_bench.hpp"
#include "solvers/tridiag/tridiag_random.cuh"
#include "solvers/tridiag/tuning_file.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" void dgtsv_(const int* n, const int* nrhs, double* dl, double* d, double* du, double* b,
                       const int* ldb, int* info);

namespace {

using namespace adi3d::tridiag;
using adi3d::cuda::check_cusparse;
using adi3d::cuda::gtsv2_nopivot;
using adi3d::cuda::gtsv2_nopivot_buffer;
using adi3d::cuda::gtsv2_strided;
using adi3d::cuda::gtsv2_strided_buffer;

struct Workload {
  const char* name;
  long count;
  long n;
  bool cpu;  // also run the CPU solver and LAPACK
};

// Owning device buffer.
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { ADI3D_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 1))); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() { cudaFree(p); }
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median time (ms) of fn over reps runs after warm-up; reset() runs before each (untimed).
double time_gpu(const std::function<void()>& reset, const std::function<void()>& fn, int reps) {
  return adi3d::cuda::EventTimer().median_ms(nullptr, 3, reps, fn, reset);
}

double copy_bandwidth_gbs(int reps) {
  const std::size_t bytes = 1ull << 30;
  DevBuf src(bytes), dst(bytes);
  ADI3D_CUDA_CHECK(cudaMemset(src.p, 1, bytes));
  const double ms = time_gpu([] {}, [&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice)); },
                             reps);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;  // read + write
}

// Zeroes a[first row] and c[last row] of every contiguous system (cuSPARSE requires it;
// ours ignores them).
template <class T>
__global__ void k_zero_corners(T* a, T* c, long n, long count) {
  const long s = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (s < count) {
    a[s * n] = T(0);
    c[s * n + n - 1] = T(0);
  }
}

struct Context {
  std::string device;
  double copy_gbs = 0;
  int reps = 15;
  bool cpu = true;
  std::vector<BenchRow> rows;
  cusparseHandle_t sparse = nullptr;
  std::optional<TridiagPolicy> tuned_f, tuned_d;
};

template <class T>
const char* prec() {
  return sizeof(T) == 4 ? "float" : "double";
}

void add_row(Context& ctx, const Workload& w, const char* precision, const std::string& solver, double ms,
             double bytes, double resid, const std::string& policy) {
  const double pts = static_cast<double>(w.count) * static_cast<double>(w.n);
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  ctx.rows.push_back(BenchRow{w.name, w.count, w.n, precision, solver, ms, pts / (ms * 1e-3) / 1e9, gbs,
                              100.0 * gbs / ctx.copy_gbs, resid, policy});
  std::printf("%-10s %-6s %-24s %10.4f ms %8.3f Gpt/s %6.1f%% copy  resid %.2e\n", w.name, precision,
              solver.c_str(), ms, pts / (ms * 1e-3) / 1e9, 100.0 * gbs / ctx.copy_gbs, resid);
  std::fflush(stdout);
}

template <class T>
void run_gpu(Context& ctx, const Workload& w) {
  const long total = w.count * w.n;
  const std::size_t bytes = static_cast<std::size_t>(total) * sizeof(T);
  DevBuf a(bytes), b(bytes), c(bytes), d0(bytes), x(bytes);
  detail::fill_random(a.as<T>(), b.as<T>(), c.as<T>(), d0.as<T>(), total, 0x5eed + static_cast<std::uint64_t>(total));
  k_zero_corners<<<static_cast<unsigned>((w.count + 255) / 256), 256>>>(a.as<T>(), c.as<T>(), w.n, w.count);
  ADI3D_CUDA_LAUNCH_CHECK();
  ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
  const TridiagBatch<T> bt{a.as<T>(), b.as<T>(), c.as<T>(), x.as<T>(), w.n, w.count, Layout::contiguous, false};
  const double floor_bytes = 5.0 * static_cast<double>(bytes);
  auto reset = [&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(x.p, d0.p, bytes, cudaMemcpyDeviceToDevice)); };
  auto ours = [&](const std::string& label, const TridiagPolicy& p) {
    const double ms = time_gpu(reset, [&] { solve_cuda(bt, p, nullptr); }, ctx.reps);
    reset();
    solve_cuda(bt, p, nullptr);
    const double r = detail::relative_residual(bt, x.as<T>(), d0.as<T>());
    add_row(ctx, w, prec<T>(), label, ms, floor_bytes, r, to_string(p));
  };
  ours("ours-default", default_policy());
  ours("ours-static", static_policy<T>(w.n, w.count, Layout::contiguous));
  {  // the static guess with earlier kernels, for comparison: the shared-memory O(n)
     // partition (stage 1 and base), and the O(n log n) PCR-Thomas base
    TridiagPolicy p = static_policy<T>(w.n, w.count, Layout::contiguous);
    p.stage1 = Stage1Method::partition;
    p.base = BaseKernel::partition;
    ours("ours-static-smem-partition", p);
    p = static_policy<T>(w.n, w.count, Layout::contiguous);
    p.base = BaseKernel::pcr_thomas;
    ours("ours-static-pcr_thomas-base", p);
  }
  const std::optional<TridiagPolicy>& tuned = sizeof(T) == 4 ? ctx.tuned_f : ctx.tuned_d;
  if (tuned) ours("ours-tuned", *tuned);

  // cuSPARSE gtsv2StridedBatch (batched, no pivoting, CR+PCR).
  {
    std::size_t buf_bytes = 0;
    check_cusparse(gtsv2_strided_buffer(ctx.sparse, static_cast<int>(w.n), a.as<T>(), b.as<T>(), c.as<T>(),
                                        x.as<T>(), static_cast<int>(w.count), static_cast<int>(w.n), &buf_bytes),
                   "gtsv2StridedBatch_bufferSizeExt");
    DevBuf buf(buf_bytes);
    auto run = [&] {
      check_cusparse(gtsv2_strided(ctx.sparse, static_cast<int>(w.n), a.as<T>(), b.as<T>(), c.as<T>(), x.as<T>(),
                                   static_cast<int>(w.count), static_cast<int>(w.n), buf.p),
                     "gtsv2StridedBatch");
    };
    const double ms = time_gpu(reset, run, ctx.reps);
    reset();
    run();
    const double r = detail::relative_residual(bt, x.as<T>(), d0.as<T>());
    add_row(ctx, w, prec<T>(), "cusparse-gtsv2StridedBatch", ms, floor_bytes, r, "");
  }
  // cuSPARSE gtsv2_nopivot for single systems (one right-hand side).
  if (w.count == 1) {
    std::size_t buf_bytes = 0;
    const int n = static_cast<int>(w.n);
    check_cusparse(gtsv2_nopivot_buffer(ctx.sparse, n, 1, a.as<T>(), b.as<T>(), c.as<T>(), x.as<T>(), n, &buf_bytes),
                   "gtsv2_nopivot_bufferSizeExt");
    DevBuf buf(buf_bytes);
    auto run = [&] {
      check_cusparse(gtsv2_nopivot(ctx.sparse, n, 1, a.as<T>(), b.as<T>(), c.as<T>(), x.as<T>(), n, buf.p),
                     "gtsv2_nopivot");
    };
    const double ms = time_gpu(reset, run, ctx.reps);
    reset();
    run();
    const double r = detail::relative_residual(bt, x.as<T>(), d0.as<T>());
    add_row(ctx, w, prec<T>(), "cusparse-gtsv2_nopivot", ms, floor_bytes, r, "");
  }

  if (!ctx.cpu || !w.cpu) return;
  // CPU: our OpenMP solver and LAPACK dgtsv (OpenMP over systems), host timers.
  std::vector<T> ha(static_cast<std::size_t>(total)), hb(ha.size()), hc(ha.size()), hd0(ha.size()), hx(ha.size());
  ADI3D_CUDA_CHECK(cudaMemcpy(ha.data(), a.p, bytes, cudaMemcpyDeviceToHost));
  ADI3D_CUDA_CHECK(cudaMemcpy(hb.data(), b.p, bytes, cudaMemcpyDeviceToHost));
  ADI3D_CUDA_CHECK(cudaMemcpy(hc.data(), c.p, bytes, cudaMemcpyDeviceToHost));
  ADI3D_CUDA_CHECK(cudaMemcpy(hd0.data(), d0.p, bytes, cudaMemcpyDeviceToHost));
  auto host_time = [&](const std::function<void()>& reset_h, const std::function<void()>& fn) {
    std::vector<double> ts;
    for (int r = -1; r < std::max(10, ctx.reps / 2); ++r) {
      reset_h();
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      const auto t1 = std::chrono::steady_clock::now();
      if (r >= 0) ts.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return median(ts);
  };
  auto host_resid = [&]() {
    ADI3D_CUDA_CHECK(cudaMemcpy(x.p, hx.data(), bytes, cudaMemcpyHostToDevice));
    return detail::relative_residual(bt, x.as<T>(), d0.as<T>());
  };
  {
    const TridiagBatch<T> hbt{ha.data(), hb.data(), hc.data(), hx.data(), w.n, w.count, Layout::contiguous, false};
    const double ms = host_time([&] { hx = hd0; }, [&] { solve_cpu(hbt); });
    add_row(ctx, w, prec<T>(), "cpu-ours-openmp", ms, floor_bytes, host_resid(), "");
  }
  if constexpr (sizeof(T) == 8) {
    std::vector<double> dl(ha.size()), dd(ha.size()), du(ha.size());
    const double ms = host_time(
        [&] {
          dl = ha;
          dd = hb;
          du = hc;
          hx = hd0;
        },
        [&] {
          const int n = static_cast<int>(w.n), nrhs = 1;
#pragma omp parallel for schedule(static)
          for (long s = 0; s < w.count; ++s) {
            int info = 0;
            const std::size_t o = static_cast<std::size_t>(s * w.n);
            // dgtsv: dl holds the n-1 sub-diagonal entries a[1..n-1].
            dgtsv_(&n, &nrhs, dl.data() + o + 1, dd.data() + o, du.data() + o, hx.data() + o, &n, &info);
          }
        });
    add_row(ctx, w, prec<T>(), "cpu-lapack-dgtsv", ms, floor_bytes, host_resid(), "");
  }
}

template <class T>
TridiagPolicy do_tune(const std::vector<Workload>& ws) {
  std::vector<TuneCase> cases;
  for (const Workload& w : ws) cases.push_back(TuneCase{w.n, w.count, Layout::contiguous});
  const TuneResult r = tune<T>(cases, false);
  std::printf("tuned %s over %zu workloads: %d candidates, %.3f ms (static %.3f ms): %s\n", prec<T>(), cases.size(),
              r.candidates, r.best_ms, r.static_ms, to_string(r.policy).c_str());
  return r.policy;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<Workload> workloads(bool quick) {
  if (quick) return {{"1Kx1K", 1024, 1024, true}, {"1x2^21", 1, 1L << 21, true}};
  return {{"1Kx1K", 1024, 1024, true},          {"4Kx4K", 4096, 4096, false},
          {"512^2x512", 512L * 512, 512, false}, {"2^20x64", 1L << 20, 64, false},
          {"1x2^21", 1, 1L << 21, true},         {"1x2^24", 1, 1L << 24, false},
          {"1x2^26", 1, 1L << 26, false}};
}

void check_precision(const std::string& precision) {
  if (precision != "float" && precision != "double" && precision != "both")
    throw std::invalid_argument("precision must be float, double or both, not '" + precision + "'");
}

void require_device() {
  if (!cuda_available()) throw std::runtime_error("no CUDA device visible");
}

std::string device_name() {
  int dev = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  ADI3D_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return prop.name;
}

// Tunes the requested precisions and upserts them into entries.
void tune_into(std::vector<TuningEntry>& entries, const std::vector<Workload>& ws, const std::string& device,
               const std::string& precision, Context* ctx) {
  auto tune_one = [&](auto tag) {
    using T = decltype(tag);
    const TridiagPolicy p = do_tune<T>(ws);
    if (ctx) (sizeof(T) == 4 ? ctx->tuned_f : ctx->tuned_d) = p;
    upsert(entries, TuningEntry{device, prec<T>(), p, "tuned by adi3d on " + utc_now()});
  };
  if (precision != "double") tune_one(float{});
  if (precision != "float") tune_one(double{});
}

}  // namespace

namespace adi3d::tridiag {

BenchReport run_bench(const BenchConfig& config) {
  check_precision(config.precision);
  require_device();
  Context ctx;
  ctx.reps = std::max(10, config.repetitions);
  ctx.cpu = config.cpu;
  int dev = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  ADI3D_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  ctx.device = prop.name;
  check_cusparse(cusparseCreate(&ctx.sparse), "cusparseCreate");
  struct SparseGuard {
    cusparseHandle_t h;
    ~SparseGuard() { cusparseDestroy(h); }
  } guard{ctx.sparse};
  ctx.copy_gbs = copy_bandwidth_gbs(ctx.reps);
  std::printf("device %s, %d SMs; device-to-device copy %.1f GB/s (read+write)\n", prop.name,
              prop.multiProcessorCount, ctx.copy_gbs);
  const std::vector<Workload> ws = workloads(config.quick);
  if (!config.tuning_path.empty()) {
    for (const TuningEntry& e : read_tuning_file(config.tuning_path))
      if (e.device == ctx.device) (e.precision == "float" ? ctx.tuned_f : ctx.tuned_d) = e.policy;
  }
  if (!config.tune_path.empty()) {
    std::vector<TuningEntry> entries = read_tuning_file(config.tune_path);
    tune_into(entries, ws, ctx.device, config.precision, &ctx);
    write_tuning_file(config.tune_path, entries);
  }
  const bool do_f = config.precision != "double", do_d = config.precision != "float";
  for (const Workload& w : ws) {
    if (do_f) run_gpu<float>(ctx, w);
    if (do_d) run_gpu<double>(ctx, w);
  }
  return BenchReport{ctx.device, prop.multiProcessorCount, ctx.copy_gbs, std::move(ctx.rows)};
}

void tune_to_file(const std::string& path, const std::string& precision, bool quick) {
  check_precision(precision);
  require_device();
  if (path.empty()) throw std::invalid_argument("tune: no tuning file path");
  std::vector<TuningEntry> entries = read_tuning_file(path);
  tune_into(entries, workloads(quick), device_name(), precision, nullptr);
  write_tuning_file(path, entries);
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace adi3d::tridiag
