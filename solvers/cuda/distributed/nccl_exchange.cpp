// NCCL between the ranks' GPUs (device_exchange.hpp): point-to-point planes and the
// allgather, queued on the backend's stream so that they order with its kernels. The
// communicator's unique id travels over MPI from rank 0.
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/distributed/device_exchange.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace adi3d {
namespace {

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string("NCCL ") + what + " failed: " + ncclGetErrorString(result));
}

template <class T>
class NcclExchange final : public DeviceExchange<T> {
 public:
  NcclExchange(Backend<T>& backend, Communicator& comm) : stream_(backend.cuda_stream()) {
    ncclUniqueId id{};
    if (comm.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    comm.broadcast(&id, sizeof id, 0);
    ADI3D_CUDA_CHECK(cudaSetDevice(backend.device()));
    check_nccl(ncclCommInitRank(&comm_, comm.size(), id, comm.rank()), "ncclCommInitRank");
  }
  ~NcclExchange() override { ncclCommDestroy(comm_); }
  NcclExchange(const NcclExchange&) = delete;
  NcclExchange& operator=(const NcclExchange&) = delete;

  void exchange(int below, const T* to_below, T* from_below, int above, const T* to_above, T* from_above,
                std::size_t count) override {
    // Messages going up first, then those going down: a pair of ranks issues its sends and
    // receives in the same order, which is how NCCL matches them (both neighbours may be
    // one rank).
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    if (above >= 0) check_nccl(ncclSend(to_above, count, type(), above, comm_, stream_), "ncclSend");
    if (below >= 0) check_nccl(ncclRecv(from_below, count, type(), below, comm_, stream_), "ncclRecv");
    if (below >= 0) check_nccl(ncclSend(to_below, count, type(), below, comm_, stream_), "ncclSend");
    if (above >= 0) check_nccl(ncclRecv(from_above, count, type(), above, comm_, stream_), "ncclRecv");
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  void allgather(const T* send, T* recv, std::size_t count) override { allgather_on(send, recv, count, stream_); }
  bool gathers_on_streams() const override { return true; }
  void allgather_on(const T* send, T* recv, std::size_t count, CUstream_st* stream) override {
    check_nccl(ncclAllGather(send, recv, count, type(), comm_, stream), "ncclAllGather");
  }

  std::string name() const override { return "NCCL"; }

 private:
  static ncclDataType_t type() { return std::is_same_v<T, float> ? ncclFloat32 : ncclFloat64; }
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace

bool nccl_compiled() { return true; }

template <class T>
std::unique_ptr<DeviceExchange<T>> make_nccl_exchange(Backend<T>& backend, Communicator& comm) {
  return std::make_unique<NcclExchange<T>>(backend, comm);
}

template std::unique_ptr<DeviceExchange<float>> make_nccl_exchange(Backend<float>&, Communicator&);
template std::unique_ptr<DeviceExchange<double>> make_nccl_exchange(Backend<double>&, Communicator&);

}  // namespace adi3d
