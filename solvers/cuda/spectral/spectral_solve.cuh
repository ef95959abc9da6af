#pragma once
// The CUDA backend's direct solve (spectral_solve.hpp): cuFFT over the odd/even extension
// of each z plane, Thomas per thread along z for every mode (spectral_solve.cu).
#include "solvers/backend.hpp"

#include <cuda_runtime.h>

#include <memory>

namespace adi3d::cuda {

// Scratch comes from `backend` (its RAII arrays); work runs on `stream` of `device`.
template <class T>
std::unique_ptr<SpectralSolve<T>> make_cuda_spectral_solve(const OperatorView<T>& op, const SpectralLayers<T>& layers,
                                                           Backend<T>& backend, cudaStream_t stream, int device);

}  // namespace adi3d::cuda
