// MPI for the process and the world communicator over it (mpi_session.hpp,
// communicator.hpp). Host memory only: device data moves by NCCL, never through MPI
// (the GPU machines' MPI has no CUDA-aware transport).
#include "solvers/distributed/mpi_session.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// MPI counts are int: larger messages go in pieces of this many bytes.
constexpr std::size_t kChunk = std::size_t(1) << 30;

class MpiPendingMax final : public PendingMax {
 public:
  MpiPendingMax(long value, MPI_Comm comm) : value_(value) {
    check(MPI_Iallreduce(MPI_IN_PLACE, &value_, 1, MPI_LONG, MPI_MAX, comm, &request_), "MPI_Iallreduce");
  }
  ~MpiPendingMax() override {
    // MPI may still write value_: a request is completed before its buffer goes.
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  long wait() override {
    check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    return value_;
  }

 private:
  long value_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, bool threads_may_overlap) : threads_may_overlap_(threads_may_overlap) {
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(double* v, int n) override { reduce(v, n, MPI_SUM); }
  void allreduce_max(double* v, int n) override { reduce(v, n, MPI_MAX); }
  void allreduce_min(double* v, int n) override { reduce(v, n, MPI_MIN); }

  void allgather(const void* send, void* recv, std::size_t bytes) override {
    if (bytes > std::numeric_limits<int>::max()) throw std::runtime_error("allgather of more than 2 GiB per rank");
    check(MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes), MPI_BYTE, comm_),
          "MPI_Allgather");
  }

  void exchange(int below, const void* to_below, void* from_below, int above, const void* to_above,
                void* from_above, std::size_t bytes) override {
    // Tags say which way a message travels, so that a neighbour both below and above (a
    // periodic axis on two ranks) pairs each receive with the right send.
    constexpr int kUp = 11, kDown = 12;
    for (std::size_t at = 0; at < bytes; at += kChunk) {
      const int n = static_cast<int>(std::min(kChunk, bytes - at));
      MPI_Request requests[4];
      int count = 0;
      auto bytes_at = [at](const void* p) { return static_cast<const char*>(p) + at; };
      if (below >= 0) {
        check(MPI_Irecv(static_cast<char*>(from_below) + at, n, MPI_BYTE, below, kUp, comm_, &requests[count++]), "MPI_Irecv");
        check(MPI_Isend(bytes_at(to_below), n, MPI_BYTE, below, kDown, comm_, &requests[count++]), "MPI_Isend");
      }
      if (above >= 0) {
        check(MPI_Irecv(static_cast<char*>(from_above) + at, n, MPI_BYTE, above, kDown, comm_, &requests[count++]), "MPI_Irecv");
        check(MPI_Isend(bytes_at(to_above), n, MPI_BYTE, above, kUp, comm_, &requests[count++]), "MPI_Isend");
      }
      check(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
  }

  void gather(const void* send, std::size_t bytes, void* recv, int root) override {
    if (bytes > std::numeric_limits<int>::max()) throw std::runtime_error("gather of more than 2 GiB from one rank");
    const int mine = static_cast<int>(bytes);
    std::vector<int> counts(rank_ == root ? size_ : 0), offsets(counts.size());
    check(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
    long long total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (total > std::numeric_limits<int>::max()) throw std::runtime_error("gather of more than 2 GiB at one rank");
      offsets[r] = static_cast<int>(total);
      total += counts[r];
    }
    check(MPI_Gatherv(send, mine, MPI_BYTE, recv, counts.data(), offsets.data(), MPI_BYTE, root, comm_),
          "MPI_Gatherv");
  }

  void broadcast(void* data, std::size_t bytes, int root) override {
    for (std::size_t at = 0; at < bytes; at += kChunk)
      check(MPI_Bcast(static_cast<char*>(data) + at, static_cast<int>(std::min(kChunk, bytes - at)), MPI_BYTE, root, comm_),
            "MPI_Bcast");
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }
  std::unique_ptr<PendingMax> start_allreduce_max(long value) override {
    return std::make_unique<MpiPendingMax>(value, comm_);
  }
  std::unique_ptr<Communicator> duplicate() override {
    return std::make_unique<MpiCommunicator>(comm_, threads_may_overlap_);
  }
  const void* mpi_comm() const override { return &comm_; }
  bool threads_may_overlap() const override { return threads_may_overlap_; }

 private:
  void reduce(double* v, int n, MPI_Op op) {
    check(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, comm_), "MPI_Allreduce");
  }
  bool threads_may_overlap_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool mpi_compiled() { return true; }

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  // A process no launcher started is one rank: MPI is left unstarted, since OpenMPI's
  // singleton start forks its daemon, much of a small run's start-up.
  if (!initialized && !started_by_launcher()) {
    world_ = make_self_communicator();
    return;
  }
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    // Multiple where the library offers it: each rank's snapshot writer thread writes its
    // slab through MPI-IO while the main thread steps; else the writes run on the main
    // thread (app/snapshot_pipeline.cpp).
    check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    started_ = true;
  } else {
    MPI_Query_thread(&provided);
  }
  world_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, provided >= MPI_THREAD_MULTIPLE);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiSession::~MpiSession() {
  world_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (started_ && !finalized) MPI_Finalize();
}

void MpiSession::abort(int code, const std::string& why) {
  if (size() > 1)
    std::fprintf(stderr, "adi3d: rank %d of %d: error: %s\n", rank(), size(), why.c_str());
  else
    std::fprintf(stderr, "adi3d: error: %s\n", why.c_str());
  std::fflush(stderr);
  if (size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
  world_.reset();
  if (started_) MPI_Finalize();
  std::exit(code);
}

}  // namespace adi3d
