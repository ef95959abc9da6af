// Built without NCCL: CUDA backends exchange through host memory (device_exchange.hpp).
#include "solvers/distributed/device_exchange.hpp"

namespace adi3d {

bool nccl_compiled() { return false; }

template <class T>
std::unique_ptr<DeviceExchange<T>> make_nccl_exchange(Backend<T>&, Communicator&) {
  return nullptr;
}

template std::unique_ptr<DeviceExchange<float>> make_nccl_exchange(Backend<float>&, Communicator&);
template std::unique_ptr<DeviceExchange<double>> make_nccl_exchange(Backend<double>&, Communicator&);

}  // namespace adi3d
