#pragma once
// Moves backend memory between the ranks of a distributed run (DESIGN.md §7: NCCL moves
// device data, MPI carries host data): the stencil's ghost planes and the partition
// method's interface rows. Two implementations: NCCL on the backend's stream, for CUDA
// backends in a build with NCCL; and host-staged (the backend's download and upload around
// the MPI communicator), for the CPU backend and CUDA builds without NCCL.
#include "solvers/backend.hpp"
#include "solvers/distributed/communicator.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace adi3d {

template <class T>
class DeviceExchange {
 public:
  virtual ~DeviceExchange() = default;
  // Sends to_below (count values of backend memory) to rank `below` and to_above to rank
  // `above`, and receives from_below from `below` and from_above from `above`; -1: no such
  // neighbour. `below` and `above` may be one rank (a periodic axis on two ranks).
  virtual void exchange(int below, const T* to_below, T* from_below, int above, const T* to_above, T* from_above,
                        std::size_t count) = 0;
  // Every rank's `count` values of send, in rank order, into recv (backend memory).
  virtual void allgather(const T* send, T* recv, std::size_t count) = 0;
  // Whether allgather_on queues on any stream of the backend's device (NCCL), so that a
  // fused slab step may gather beside its kernels (slab_coupling.hpp).
  virtual bool gathers_on_streams() const { return false; }
  // allgather queued on `stream` (where gathers_on_streams()).
  virtual void allgather_on(const T* send, T* recv, std::size_t count, CUstream_st* stream);
  virtual std::string name() const = 0;
};

template <class T>
void DeviceExchange<T>::allgather_on(const T*, T*, std::size_t, CUstream_st*) {
  throw std::logic_error(name() + " gathers on the backend's stream only");
}

// NCCL where the backend is a CUDA backend and the build has NCCL; else host-staged.
template <class T>
std::unique_ptr<DeviceExchange<T>> make_device_exchange(Backend<T>& backend, Communicator& comm);

// Whether the build has NCCL (ADI3D_NCCL).
bool nccl_compiled();

// NCCL over the backend's device and stream (collective: every rank calls it); null where
// the build has no NCCL.
template <class T>
std::unique_ptr<DeviceExchange<T>> make_nccl_exchange(Backend<T>& backend, Communicator& comm);

}  // namespace adi3d
