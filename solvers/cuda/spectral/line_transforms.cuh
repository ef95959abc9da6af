#pragma once
// The CUDA backend's direct solve where x and y are sine or cosine axes: each axis's
// transform from the R2C of its lines' extensions, one axis at a time, between compact arrays
// (line_transforms.cu); the extension of whole planes (spectral_solve.cuh) takes periodic x
// or y axes.
#include "solvers/backend.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

namespace adi3d::cuda {

// The most a warp's staged modes of a line may take in the line transforms' shared memory:
// 96 KB, which every GPU from sm_80 on grants a block.
constexpr std::size_t kLineTransformTileBytes = 96 * 1024;

// Whether the line transforms take the operator: x and y not periodic, at least 4 nodes each
// (shorter axes are left to the extension of whole planes), and each line's modes fit a tile.
template <class T>
bool line_transforms_apply(const OperatorView<T>& op) {
  for (int a = 0; a < 2; ++a)
    if (op.lo[a] == BoundaryKind::periodic || op.n[a] < 4 ||
        static_cast<std::size_t>(op.n[a]) * sizeof(T) > kLineTransformTileBytes)
      return false;
  return true;
}

// Scratch comes from `backend` (its RAII arrays); work runs on `stream` of `device`.
template <class T>
std::unique_ptr<SpectralSolve<T>> make_cuda_line_transform_solve(const OperatorView<T>& op,
                                                                 const SpectralLayers<T>& layers, Backend<T>& backend,
                                                                 cudaStream_t stream, int device);

}  // namespace adi3d::cuda
