#pragma once
// The CUDA backend behind a Backend<T>& (its device and stream), for code in solvers/cuda
// that runs its own kernels next to the backend's operations (the bench's reference steps).
#include "solvers/cuda/backend/cuda_backend.cuh"

namespace adi3d::cuda {

template <class T>
CudaBackend<T>& cuda_backend_of(Backend<T>& backend) {
  auto* cuda = dynamic_cast<CudaBackend<T>*>(&backend);
  if (!cuda) throw BackendUnavailable("needs the CUDA backend, not " + backend.description());
  return *cuda;
}

}  // namespace adi3d::cuda
