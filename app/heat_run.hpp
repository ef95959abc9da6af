#pragma once
// The heat run loop: initial data, Douglas steps to t_end with progress, errors against
// the exact solution when the deck gives one. SIGTERM or SIGINT stops it after the step
// in progress (stop_agreement.hpp).
#include "app/problem_setup.hpp"
#include "app/run_timings.hpp"
#include "physics/error_norms.hpp"
#include "solvers/backend.hpp"

#include <optional>
#include <string>

namespace adi3d::app {

struct RunResult {
  long steps = 0;
  double t_final = 0;
  double wall_seconds = 0;   // stepping only
  std::size_t points = 0;
  long fused_steps = 0;      // of those stepped here, by the backend's fused step
  int stopped_by = 0;        // the signal that stopped the run before t_end (stop_signals.hpp), else 0
  std::optional<physics::ErrorNorms> error;
  RunTimings timings;        // all but setup (the caller's)
};

// What a run reports to an observer (the snapshot pipeline): the state after step 0 (the
// initial or restarted field), after every step, and at the end. u is backend memory,
// valid only during the call.
template <class T>
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_start(long step, double t, Backend<T>& backend, const T* u) = 0;
  virtual void on_step(long step, double t, Backend<T>& backend, const T* u) = 0;
  virtual void on_end(long step, double t, Backend<T>& backend, const T* u) = 0;
  // Instead of on_end when a signal stops the run early (stop_signals.hpp): the state to
  // continue from. The field has been checked finite.
  virtual void on_stop(long step, double t, Backend<T>& backend, const T* u) {
    (void)step, (void)t, (void)backend, (void)u;
  }
  // Whether on_step at this step writes something (a snapshot, a checkpoint): the run then
  // checks that the field is finite first (finite_check.hpp). An observer that cannot say
  // is checked before every step.
  virtual bool writes_at(long step, double t) const {
    (void)step, (void)t;
    return true;
  }
};

// Where a restarted run continues: the step count and time of a checkpoint and its field
// (host memory: this rank's planes, its slab with the ghost planes, in the slab's order).
template <class T>
struct HeatStart {
  long step = 0;
  double t = 0;
  const T* u = nullptr;
};

template <class T>
RunResult run_heat(const io::RunConfig& config, const ProblemSetup<T>& problem, Backend<T>& backend,
                   bool interactive, RunObserver<T>* observer = nullptr,
                   const HeatStart<T>* start = nullptr);

// Errors of a backend field (the rank's slab: exact.slab()) against the exact formula at
// time t, over the whole grid: u - exact formed where the backend is (on the GPU for a CUDA backend),
// into `error` (backend memory, the slab's size) where given, else into a scratch array,
// and its norms reduced there. An exact solution that is not finite there is
// NonFiniteFormula on every rank. Collective on distributed runs.
template <class T>
physics::ErrorNorms error_against(const physics::GridFormula<T>& exact, double t, Backend<T>& backend, const T* u,
                                  Communicator* comm = nullptr, T* error = nullptr);

// Number of steps to reach t_end with steps of at most dt (the last one may be shorter).
long step_count(double t_end, double dt);

}  // namespace adi3d::app
