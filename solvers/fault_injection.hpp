#pragma once
// A test switch that makes one operation fail as the hardware or the system would (issue
// 40): ADI3D_FAULT=KIND:N fails the Nth operation of that kind in the process (N from 1).
//   alloc:N   the Nth backend allocation (device memory on CUDA, host memory on the CPU)
//             runs out, through the same path as a real out-of-memory
//   launch:N  the Nth checked CUDA kernel launch reports cudaErrorLaunchFailure (the
//             context stays usable)
//   trap:N    at the Nth checked CUDA kernel launch a kernel traps: the context is lost
//             for good, as after a device fault, and every later CUDA call fails
//   step:N    the Nth time step (or Poisson iteration) throws before it starts, on any
//             backend: the run's failure path without a GPU
// KIND:N@R fails it on rank R of a distributed run only (the rank the launcher gives the
// process: OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID), as a fault on one
// node would.
// The tests run adi3d under it and check the one-line error, the exit status and that
// the last checkpoint is intact. Unset costs a load and a branch per operation.
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace adi3d {

enum class FaultKind { alloc, launch, trap, step };

namespace detail {

// This process's rank as its launcher gives it, before MPI starts; 0 without one.
inline long launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name)) return std::strtol(v, nullptr, 10);
  return 0;
}

struct FaultPlan {
  bool active = false;
  FaultKind kind = FaultKind::alloc;
  long at = 0;
};

inline FaultPlan read_fault_plan() {
  const char* v = std::getenv("ADI3D_FAULT");
  const std::string value = v ? v : "";
  FaultPlan plan;
  if (value.empty()) return plan;
  const auto bad = [&value] {
    return std::invalid_argument("ADI3D_FAULT='" + value + "': expected KIND:N or KIND:N@RANK with KIND alloc, "
                                 "launch, trap or step and N a count from 1");
  };
  const std::size_t colon = value.find(':'), at = value.find('@');
  if (colon == std::string::npos) throw bad();
  const std::string kind = value.substr(0, colon);
  const std::string count = value.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1);
  if (kind == "alloc") plan.kind = FaultKind::alloc;
  else if (kind == "launch") plan.kind = FaultKind::launch;
  else if (kind == "trap") plan.kind = FaultKind::trap;
  else if (kind == "step") plan.kind = FaultKind::step;
  else throw bad();
  char* end = nullptr;
  plan.at = std::strtol(count.c_str(), &end, 10);
  if (count.empty() || *end != '\0' || plan.at < 1) throw bad();
  if (at != std::string::npos) {
    const std::string rank = value.substr(at + 1);
    const long r = std::strtol(rank.c_str(), &end, 10);
    if (rank.empty() || *end != '\0' || r < 0) throw bad();
    if (r != launcher_rank()) return plan;  // another rank's fault: none here
  }
  plan.active = true;
  return plan;
}

}  // namespace detail

inline const detail::FaultPlan& fault_plan() {
  static const detail::FaultPlan plan = detail::read_fault_plan();
  return plan;
}

// True exactly once: at the Nth operation of the kind ADI3D_FAULT names. A trap counts
// kernel launches as launch does: launch checks ask for FaultKind::launch, and
// fault_plan().kind says which of the two is due.
inline bool fault_due(FaultKind kind) {
  const detail::FaultPlan& plan = fault_plan();
  if (!plan.active) return false;
  const FaultKind counted = plan.kind == FaultKind::trap ? FaultKind::launch : plan.kind;
  if (kind != counted) return false;
  static std::atomic<long> seen{0};
  return ++seen == plan.at;
}

// What an injected fault says about itself, for messages.
inline std::string injected_fault_note() {
  const char* v = std::getenv("ADI3D_FAULT");
  return std::string("injected by ADI3D_FAULT=") + (v ? v : "");
}

}  // namespace adi3d
