// The one-rank communicator (communicator.hpp).
#include "solvers/distributed/communicator.hpp"

#include <cstring>
#include <stdexcept>

namespace adi3d {
namespace {

class DoneMax final : public PendingMax {
 public:
  explicit DoneMax(long value) : value_(value) {}
  long wait() override { return value_; }

 private:
  long value_;
};

class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(double*, int) override {}
  void allreduce_max(double*, int) override {}
  void allreduce_min(double*, int) override {}
  void allgather(const void* send, void* recv, std::size_t bytes) override {
    if (bytes) std::memmove(recv, send, bytes);
  }
  void exchange(int below, const void*, void*, int above, const void*, void*, std::size_t) override {
    if (below >= 0 || above >= 0) throw std::logic_error("a one-rank run has no neighbours to exchange with");
  }
  void gather(const void* send, std::size_t bytes, void* recv, int) override {
    if (bytes) std::memmove(recv, send, bytes);
  }
  void broadcast(void*, std::size_t, int) override {}
  void barrier() override {}
  std::unique_ptr<Communicator> duplicate() override { return std::make_unique<SelfCommunicator>(); }
};

}  // namespace

std::unique_ptr<PendingMax> Communicator::start_allreduce_max(long value) {
  // Doubles hold every long a flag or a count needs exactly (|value| < 2^53).
  double v = static_cast<double>(value);
  allreduce_max(&v, 1);
  return std::make_unique<DoneMax>(static_cast<long>(v));
}

std::unique_ptr<Communicator> make_self_communicator() { return std::make_unique<SelfCommunicator>(); }

}  // namespace adi3d
