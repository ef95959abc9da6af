#pragma once
// CUDA-event timing for the benchmarks and the tridiagonal tuner: the GPU time of the work
// an operation queues on a stream, and the median of many such times after a warm-up.
#include "solvers/cuda/backend/cuda_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace adi3d::cuda {

class EventTimer {
 public:
  EventTimer() {
    ADI3D_CUDA_CHECK(cudaEventCreate(&start_));
    ADI3D_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    static_cast<void>(cudaEventDestroy(start_));
    static_cast<void>(cudaEventDestroy(stop_));
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Milliseconds between events recorded on `stream` around the work `op` queues there.
  double time_ms(cudaStream_t stream, const std::function<void()>& op) {
    ADI3D_CUDA_CHECK(cudaEventRecord(start_, stream));
    op();
    ADI3D_CUDA_CHECK(cudaEventRecord(stop_, stream));
    ADI3D_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    ADI3D_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

  // Median of `repetitions` times after `warmup` untimed calls; each time is that of
  // `calls` calls queued back to back, per call. `reset`, when given, runs untimed before
  // every timing (to restore inputs that `op` overwrites).
  double median_ms(cudaStream_t stream, int warmup, int repetitions, const std::function<void()>& op,
                   const std::function<void()>& reset = {}, int calls = 1) {
    for (int w = 0; w < warmup; ++w) {
      if (reset) reset();
      op();
    }
    std::vector<double> times;
    for (int r = 0; r < std::max(1, repetitions); ++r) {
      if (reset) reset();
      times.push_back(time_ms(stream, [&] {
                        for (int c = 0; c < calls; ++c) op();
                      }) /
                      std::max(1, calls));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace adi3d::cuda
