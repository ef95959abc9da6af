// The host-staged exchange, and the choice between it and NCCL (device_exchange.hpp).
#include "solvers/distributed/device_exchange.hpp"

#include <vector>

namespace adi3d {
namespace {

template <class T>
class StagedExchange final : public DeviceExchange<T> {
 public:
  StagedExchange(Backend<T>& backend, Communicator& comm) : backend_(backend), comm_(comm) {}

  void exchange(int below, const T* to_below, T* from_below, int above, const T* to_above, T* from_above,
                std::size_t count) override {
    send_.resize(2 * count);
    recv_.resize(2 * count);
    if (below >= 0) backend_.download(to_below, send_.data(), count);
    if (above >= 0) backend_.download(to_above, send_.data() + count, count);
    comm_.exchange(below, send_.data(), recv_.data(), above, send_.data() + count, recv_.data() + count,
                   count * sizeof(T));
    if (below >= 0) backend_.upload(recv_.data(), from_below, count);
    if (above >= 0) backend_.upload(recv_.data() + count, from_above, count);
  }

  void allgather(const T* send, T* recv, std::size_t count) override {
    send_.resize(count);
    recv_.resize(count * static_cast<std::size_t>(comm_.size()));
    backend_.download(send, send_.data(), count);
    comm_.allgather(send_.data(), recv_.data(), count * sizeof(T));
    backend_.upload(recv_.data(), recv, recv_.size());
  }

  std::string name() const override { return "MPI through host memory"; }

 private:
  Backend<T>& backend_;
  Communicator& comm_;
  std::vector<T> send_, recv_;
};

}  // namespace

template <class T>
std::unique_ptr<DeviceExchange<T>> make_device_exchange(Backend<T>& backend, Communicator& comm) {
  if (backend.kind() == BackendKind::cuda)
    if (std::unique_ptr<DeviceExchange<T>> nccl = make_nccl_exchange(backend, comm)) return nccl;
  return std::make_unique<StagedExchange<T>>(backend, comm);
}

template std::unique_ptr<DeviceExchange<float>> make_device_exchange(Backend<float>&, Communicator&);
template std::unique_ptr<DeviceExchange<double>> make_device_exchange(Backend<double>&, Communicator&);

}  // namespace adi3d
