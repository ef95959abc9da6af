#pragma once
// MPI for a whole process: started once before anything else (app/main.cpp) and finished
// at exit. A build without MPI (ADI3D_MPI=OFF) still has this class: it is the one-rank
// session, and refuses to run as one of several ranks started by a launcher (mpirun,
// srun), which would otherwise run the deck P times side by side.
#include "solvers/distributed/communicator.hpp"

#include <memory>
#include <string>

namespace adi3d {

bool mpi_compiled();

class MpiSession {
 public:
  // Starts MPI when the build has it and a launcher started the process (a process started
  // alone is one rank without MPI); throws std::runtime_error where a launcher started
  // several ranks of a build without MPI.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  Communicator& world() { return *world_; }
  int rank() const { return world_->rank(); }
  int size() const { return world_->size(); }
  // The rank among those on this node (the GPU it takes), and how many share the node.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Ends every rank now with `code`, after printing why on this rank's stderr (one line
  // naming the rank). A one-rank session just exits.
  [[noreturn]] void abort(int code, const std::string& why);

 private:
  std::unique_ptr<Communicator> world_;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool started_ = false;
};

// The number of ranks a launcher says it started (OpenMPI, MPICH/PMI, Slurm), 1 if none.
int launcher_rank_count();
// Whether a launcher's variables are in the environment (a run under mpirun or srun).
bool started_by_launcher();

}  // namespace adi3d
