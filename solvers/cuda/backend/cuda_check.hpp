#pragma once
// Error checking for every CUDA runtime call and kernel launch. A failure throws CudaError
// carrying the file, line, the checked expression and cudaGetErrorString, so an
// asynchronous fault names the call that reported it. Define ADI3D_CUDA_DEBUG_SYNC to
// synchronise after each launch: the error then points at the launch that caused it.
// The solver kernels (ADI3D_FAULT_INJECTION, set for adi3d_cuda_kernels) check launches
// through launch_status(), which also injects the faults of ADI3D_FAULT=launch:N and
// trap:N (solvers/fault_injection.hpp); the tridiagonal library checks them directly.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace adi3d::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(const char* file, int line, const char* expr, cudaError_t code)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ")"),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

inline void check_cuda(cudaError_t code, const char* file, int line, const char* expr) {
  if (code != cudaSuccess) throw CudaError(file, line, expr, code);
}

#if defined(ADI3D_FAULT_INJECTION)
// cudaGetLastError(), or the fault ADI3D_FAULT asks for at this launch (cuda_faults.cu).
cudaError_t launch_status();
#define ADI3D_CUDA_LAST_LAUNCH_ERROR() ::adi3d::cuda::launch_status()
#else
#define ADI3D_CUDA_LAST_LAUNCH_ERROR() cudaGetLastError()
#endif

}  // namespace adi3d::cuda

#define ADI3D_CUDA_CHECK(expr) ::adi3d::cuda::check_cuda((expr), __FILE__, __LINE__, #expr)

#if defined(ADI3D_CUDA_DEBUG_SYNC)
#define ADI3D_CUDA_LAUNCH_CHECK()                                                  \
  do {                                                                             \
    ::adi3d::cuda::check_cuda(ADI3D_CUDA_LAST_LAUNCH_ERROR(), __FILE__, __LINE__, "kernel launch"); \
    ::adi3d::cuda::check_cuda(cudaDeviceSynchronize(), __FILE__, __LINE__,         \
                              "cudaDeviceSynchronize after launch");               \
  } while (0)
#else
#define ADI3D_CUDA_LAUNCH_CHECK() \
  ::adi3d::cuda::check_cuda(ADI3D_CUDA_LAST_LAUNCH_ERROR(), __FILE__, __LINE__, "kernel launch")
#endif
