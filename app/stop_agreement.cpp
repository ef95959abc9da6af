#include "app/stop_agreement.hpp"

#include "app/stop_signals.hpp"

namespace adi3d::app {

StopAgreement::StopAgreement(Communicator* comm) : comm_(comm) {}

StopAgreement::~StopAgreement() {
  // Every rank started the reduction in flight, so waiting for it cannot hang.
  try {
    finish();
  } catch (...) {
  }
}

int StopAgreement::poll() {
  if (!comm_) return stop_signal();
  const long agreed = pending_ ? pending_->wait() : 0;
  pending_ = agreed ? nullptr : comm_->start_allreduce_max(stop_signal());
  return static_cast<int>(agreed);
}

void StopAgreement::finish() {
  if (pending_) pending_->wait();
  pending_.reset();
}

}  // namespace adi3d::app
