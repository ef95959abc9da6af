#pragma once
// Where a run's seconds go, for `adi3d run --verbose` and the summary JSON: the host's
// clock around each phase, the backend synchronised before a phase's clock stops, so that
// GPU work is counted in the phase that queued it rather than where something later waits.
#include <chrono>

namespace adi3d::app {

struct RunTimings {
  double setup = 0;     // deck, formulas, backend (on a GPU: the CUDA context)
  double initial = 0;   // initial.u, material.diffusivity, the stepper's data
  double compile = 0;   // of which: grid formulas compiled for the GPU (NVRTC or the cache)
  double stepping = 0;  // the steps or iterations, without the checks and outputs among them
  double checks = 0;    // finite checks of the field (finite_check.hpp)
  double output = 0;    // snapshots and checkpoints: downloads, error fields, the writer's wait
  double error = 0;     // check.exact's errors at the end
};

// When the process began: the first call's time (main() makes it first), then kept.
inline std::chrono::steady_clock::time_point process_start() {
  static const auto start = std::chrono::steady_clock::now();
  return start;
}

// Seconds on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace adi3d::app
