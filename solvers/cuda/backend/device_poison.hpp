#pragma once
// Device memory under the ADI3D_POISON test switch (solvers/poison.hpp): filled with the
// pattern on the given stream, so that the fill is ordered before any kernel that later
// uses the memory on that stream, and before a stream-ordered free hands it to the pool.
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/poison.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace adi3d::cuda {

inline void poison_device(void* p, std::size_t bytes, cudaStream_t stream) {
  const Poison setting = poison_setting();
  if (setting != Poison::off && p && bytes)
    ADI3D_CUDA_CHECK(cudaMemsetAsync(p, poison_byte(setting), bytes, stream));
}

}  // namespace adi3d::cuda
