#pragma once
// The device attributes the CUDA launches size their grids and shared memory by: one
// query of both, for every launcher that needs them. Internal to the CUDA backend.
#include "solvers/cuda/backend/cuda_check.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace adi3d::cuda::fused {

struct DeviceLimits {
  int sms = 0;
  int optin = 0;  // shared memory a block may opt in to
};
inline DeviceLimits device_limits(int device) {
  DeviceLimits l;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&l.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return l;
}

// Blocks of `threads` of kernel, with smem bytes of dynamic shared memory, that one SM
// holds at once (the kernel's shared-memory limit set to smem first: the occupancy query
// counts no block past it); -1 where smem exceeds what a block may opt in to.
template <class Kernel>
int blocks_per_sm(Kernel kernel, std::size_t smem, int threads, const DeviceLimits& limits) {
  if (smem > static_cast<std::size_t>(limits.optin)) return -1;
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return per_sm;
}

}  // namespace adi3d::cuda::fused
