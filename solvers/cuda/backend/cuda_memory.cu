// Device memory with owners: cudaMalloc into an Array<T> whose deleter calls cudaFree, and
// the estimate of what a grid needs, so that running out of memory says by how much.
#include "solvers/byte_size.hpp"
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_poison.hpp"
#include "solvers/fault_injection.hpp"

#include <string>

namespace adi3d {

std::size_t cuda_free_bytes(int device) {
  int previous = 0;
  std::size_t free_b = 0, total_b = 0;
  if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
      cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cudaSetDevice(previous);
  return free_b;
}

namespace cuda {
namespace {

template <class T>
void free_device(T* p) {
  // A destructor cannot throw; a failing cudaFree here means the context is already gone.
  if (p) static_cast<void>(cudaFree(p));
}

}  // namespace

template <class T>
Array<T> device_allocate(std::size_t n) {
  if (n == 0) return Array<T>();
  const std::size_t bytes = n * sizeof(T);
  void* p = nullptr;
  const bool injected = fault_due(FaultKind::alloc);
  const cudaError_t err = injected ? cudaErrorMemoryAllocation : cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the error so that later calls do not report it
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
      throw BackendUnavailable("CUDA allocation failed: an array needs " + byte_size(bytes) + ", the device has " +
                               byte_size(free_b) + " free of " + byte_size(total_b) +
                               " (use a smaller grid, float, or the cpu backend)" +
                               (injected ? "; " + injected_fault_note() : std::string()));
    throw CudaError(__FILE__, __LINE__, "cudaMalloc", err);
  }
  // cudaMalloc takes no stream: the poison fill (test switch) is waited for here, so that
  // no stream's kernels can overtake it.
  if (poison_setting() != Poison::off) {
    poison_device(p, bytes, nullptr);
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  return Array<T>(static_cast<T*>(p), n, &free_device<T>);
}

template Array<float> device_allocate<float>(std::size_t);
template Array<double> device_allocate<double>(std::size_t);
template Array<unsigned> device_allocate<unsigned>(std::size_t);
template Array<std::uint8_t> device_allocate<std::uint8_t>(std::size_t);
template Array<unsigned long long> device_allocate<unsigned long long>(std::size_t);

}  // namespace cuda
}  // namespace adi3d
