// The launch side of ADI3D_FAULT (solvers/fault_injection.hpp): at the Nth checked launch
// of a solver kernel, launch:N reports a launch failure and trap:N runs a kernel that
// traps, which loses the context the way a device fault does (every later CUDA call of
// the process fails), so that the tests see what a user sees after one.
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/fault_injection.hpp"

namespace adi3d::cuda {
namespace {

__global__ void trap_kernel() { __trap(); }

}  // namespace

cudaError_t launch_status() {
  const cudaError_t real = cudaGetLastError();
  if (real != cudaSuccess || !fault_due(FaultKind::launch)) return real;
  if (fault_plan().kind == FaultKind::launch) return cudaErrorLaunchFailure;
  trap_kernel<<<1, 1>>>();
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

}  // namespace adi3d::cuda
