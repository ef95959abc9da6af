#pragma once
// Programmatic dependent launch (sm_90): a kernel launched by launch_overlapped may start
// while the kernel before it in the stream is still running (its blocks are placed and
// run their prologue as SMs free up), and waits in wait_prior_grid until that kernel has
// completed and its writes are visible. The fused step's passes use it to hide the gap
// between kernels; launched the ordinary way, or built for an older architecture, both
// device calls do nothing.
#include "solvers/cuda/cuda_check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace adi3d::cuda {

// Before the first access to global memory that the previous kernel may write or read.
__device__ __forceinline__ void wait_prior_grid() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
// Lets the next kernel be launched once every block of this one has called it (or exited).
__device__ __forceinline__ void allow_next_grid() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), allowed to overlap the previous kernel
// of the stream where overlap is true (a device of compute capability 9.0 or newer: the
// caller checks). The kernel must call wait_prior_grid before touching global memory.
template <class... Params, class... Args>
void launch_overlapped(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                       bool overlap, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = overlap ? 1 : 0;
  ADI3D_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  ADI3D_CUDA_LAUNCH_CHECK();
}

}  // namespace adi3d::cuda
