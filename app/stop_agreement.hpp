#pragma once
// When a run stops on a signal (stop_signals.hpp): polled once per step (or Poisson
// iteration), it says whether to stop after this one. One rank reads its own flag, with
// no MPI. The ranks of a distributed run must stop after the same step, though mpirun's
// signal reaches them at different moments, so they agree through a non-blocking max of
// their flags (Communicator::start_allreduce_max) started at each poll and read at the
// next: every rank then stops one step after the first rank that saw the signal.
//
// Why not a blocking allreduce at each step: it would wait for the slowest rank every
// step, which costs most where steps are short. Why not one every N steps: a step of a
// large grid may take seconds, and a scheduler's grace before SIGKILL is often 30-60 s.
// The non-blocking reduction costs one 8-byte collective per step whose latency is hidden
// behind the step's own work, and its wait at the next poll finds it done.
#include "solvers/distributed/communicator.hpp"

#include <memory>

namespace adi3d::app {

class StopAgreement {
 public:
  // `comm` null: a one-rank run.
  explicit StopAgreement(Communicator* comm);
  ~StopAgreement();
  StopAgreement(const StopAgreement&) = delete;
  StopAgreement& operator=(const StopAgreement&) = delete;

  // The stop signal (SIGTERM/SIGINT) every rank agrees on, 0 to go on. Call at the same
  // point on every rank; when several signals differ, the larger number wins.
  int poll();
  // Completes the reduction still in flight (every rank calls it at the same point).
  void finish();

 private:
  Communicator* comm_;
  std::unique_ptr<PendingMax> pending_;
};

}  // namespace adi3d::app
