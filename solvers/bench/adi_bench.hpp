#pragma once
// What `adi3d bench adi` measures our Douglas step against, on the same CUDA backend (its
// device and stream): a Douglas step built on cuSPARSE the way a user of that library
// would write it, an explicit (FTCS) step, and event timing, copies and random fills on
// the backend's stream. Plain C++ (no CUDA headers). Each class takes constant alpha and
// Dirichlet data fixed in time on every face (the heat_sine problem and the benchmarks),
// and throws std::invalid_argument for anything else; BackendUnavailable without CUDA.
#include "solvers/backend.hpp"
#include "solvers/diffusion.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace adi3d::cuda {

// Calls per timing in the benchmarks: op queued kCallsPerTiming times back to back between
// two events, as a time loop queues its steps, so that the host's work per call and the
// launch from an idle GPU (about 35 us of the fused step at 512^3 when it is timed alone:
// 1.461 against 1.426 ms float on an H100) overlap the GPU's work as they do in a run.
inline constexpr int kCallsPerTiming = 10;

// Median of `repetitions` timings of op, each between two CUDA events on the backend's
// stream around `calls` calls (per call), after `warmup` untimed calls.
template <class T>
double median_ms(Backend<T>& backend, int warmup, int repetitions, const std::function<void()>& op,
                 int calls = kCallsPerTiming);
// One call of op between two events (long loops: a whole solve).
template <class T>
double timed_ms(Backend<T>& backend, const std::function<void()>& op);
// dst = src (n elements), cudaMemcpyAsync device to device on the backend's stream.
template <class T>
void device_copy(Backend<T>& backend, T* dst, const T* src, std::size_t n);
// x[e] uniform in [lo, hi) from a counter hash of (seed, e): fresh data without a host pass.
template <class T>
void fill_random(Backend<T>& backend, T* x, std::size_t n, unsigned seed, double lo, double hi);

// One Douglas step u += du, (I - tau Ax)(I - tau Ay)(I - tau Az) du = dt A u, tau = theta dt,
// through cuSPARSE: a 7-point rhs kernel that writes dt A u with y slowest (x, z, y order),
// gtsv2StridedBatch on the x lines, gtsvInterleavedBatch (algo 0) on the y lines (in that
// order the y systems are interleaved, batch nx nz), a permutation back to x, y, z order,
// gtsvInterleavedBatch on the z lines (batch nx ny), and u += du. Dirichlet rows are
// identity rows with du = 0, as in ours. The coefficient arrays are formed once; those that
// cuSPARSE overwrites (found by a probe at construction) are formed again in every step.
template <class T>
class CusparseDouglasStep {
 public:
  CusparseDouglasStep(Backend<T>& backend, const Diffusion<T>& diffusion, double dt, double theta);
  ~CusparseDouglasStep();
  CusparseDouglasStep(const CusparseDouglasStep&) = delete;
  CusparseDouglasStep& operator=(const CusparseDouglasStep&) = delete;

  void step(T* u);

  // The step's stages, each runnable on its own for a time breakdown (on whatever the
  // scratch arrays hold; every stage keeps bounded data bounded).
  static int stage_count();
  static const char* stage_name(int stage);
  void run_stage(int stage, T* u);

  // The y lines the way the x, y, z layout offers them without a permutation: one
  // gtsvInterleavedBatch call per z plane (batch nx), on d in x, y, z order. Not part of
  // step(); the bench times it to show why step() permutes instead.
  void solve_y_per_plane(T* d);

  // Coefficient arrays cuSPARSE overwrote in the probe ("y du", ...), formed again each step.
  const std::vector<std::string>& rebuilt_each_step() const;
  // Device bytes held (coefficients, scratch, cuSPARSE buffer).
  std::size_t device_bytes() const;
  // Device bytes a step on this grid would hold, for a free-memory check before construction.
  static std::size_t estimate_bytes(const Grid3& grid);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// u_new = u + dt A u at unknown nodes, u_new = u at Dirichlet nodes: one fused 7-point
// kernel with Z-pencil register tiling (2 arrays per point), ping-pong buffers.
template <class T>
class FtcsStep {
 public:
  FtcsStep(Backend<T>& backend, const Diffusion<T>& diffusion, double dt);
  void step(const T* u, T* u_new);
  // The stability limit of forward Euler for this operator: 1 / (2 sum_a alpha_a / h_a^2).
  static double stable_dt(const Diffusion<T>& diffusion) {
    double sum = 0;
    for (int a = 0; a < 3; ++a) sum += diffusion.alpha[a] / (diffusion.grid.h[a] * diffusion.grid.h[a]);
    return 1.0 / (2.0 * sum);
  }

 private:
  Backend<T>& backend_;
  Grid3 grid_;
  T weight_[3];  // alpha_a / h_a^2, as discretization.hpp forms an interior row's weights
  T dt_;
};

}  // namespace adi3d::cuda
