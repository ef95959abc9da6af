#pragma once
// The ranks of a distributed run as the solvers see them: host-side collectives and
// neighbour exchanges (DESIGN.md §7: MPI carries control and host data). One rank without
// MPI is the self communicator; solvers/distributed/mpi_communicator.cpp implements it
// over MPI where the build has MPI. Buffers are host memory.
#include <cstddef>
#include <memory>
#include <string>

namespace adi3d {

// A reduction started now and read later (MPI_Iallreduce): work done between the start
// and wait() hides its latency and the ranks' skew.
class PendingMax {
 public:
  virtual ~PendingMax() = default;
  // The max over ranks; blocks until every rank has contributed. Call once.
  virtual long wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place, element-wise over all ranks.
  virtual void allreduce_sum(double* values, int count) = 0;
  virtual void allreduce_max(double* values, int count) = 0;
  virtual void allreduce_min(double* values, int count) = 0;
  // Every rank's `bytes` of send, in rank order, into recv (size() * bytes).
  virtual void allgather(const void* send, void* recv, std::size_t bytes) = 0;
  // Sends to_below to rank `below` and to_above to rank `above`, and receives from_below from
  // `below` and from_above from `above` (bytes each; a rank of -1 takes no part; `below`
  // and `above` may be the same rank, as on a periodic axis split in two).
  virtual void exchange(int below, const void* to_below, void* from_below, int above, const void* to_above,
                        void* from_above, std::size_t bytes) = 0;
  // Gathers each rank's `bytes` at `root` in rank order (recv is read on root only; sizes
  // may differ by rank).
  virtual void gather(const void* send, std::size_t bytes, void* recv, int root) = 0;
  // Root's bytes to every rank.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  virtual void barrier() = 0;
  // The same ranks with a message space of their own (MPI_Comm_dup), for collectives that
  // another thread runs beside this communicator's (the snapshot writer's). Collective.
  virtual std::unique_ptr<Communicator> duplicate() = 0;
  // The MPI_Comm under it (points to one), for libraries that take one (parallel HDF5);
  // null for the one-rank communicator.
  virtual const void* mpi_comm() const { return nullptr; }
  // Whether two threads may call into communicators at once (MPI_THREAD_MULTIPLE).
  virtual bool threads_may_overlap() const { return true; }
  // The max of every rank's value, started now. Every rank starts it at the same point of
  // its sequence of collectives. This default reduces at once (blocking).
  virtual std::unique_ptr<PendingMax> start_allreduce_max(long value);
};

// The one-rank communicator: collectives are copies.
std::unique_ptr<Communicator> make_self_communicator();

}  // namespace adi3d
