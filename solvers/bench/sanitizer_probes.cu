#include "solvers/bench/sanitizer_probes.hpp"

#include "solvers/backend.hpp"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/async_copy.cuh"

namespace adi3d::cuda {
namespace {

constexpr int kRow = 256;     // floats a block stores in one bulk copy
constexpr int kBlocks = 64;

__host__ __device__ float probe_value(int i) { return static_cast<float>(i) + 0.5f; }

__global__ void bulk_store_rows(float* out) {
  __shared__ __align__(16) float row[kRow];
  for (int i = threadIdx.x; i < kRow; i += blockDim.x) row[i] = probe_value(blockIdx.x * kRow + i);
  fence_proxy_async();  // the row's ordinary stores before the copy engine reads it
  __syncthreads();
  if (threadIdx.x == 0) {
    bulk_store(out + blockIdx.x * kRow, row, kRow * sizeof(float));
    bulk_commit();
    bulk_wait();
  }
}

__global__ void count_wrong(const float* in, unsigned* wrong) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kRow * kBlocks && in[i] != probe_value(i)) atomicAdd(wrong, 1u);
}

}  // namespace

bool bulk_store_round_trip(int device) {
  ADI3D_CUDA_CHECK(cudaSetDevice(device));
  if (!bulk_copies_usable(reinterpret_cast<const void*>(bulk_store_rows), device))
    throw BackendUnavailable("bulk copies are not usable here (device before sm_90, a build without sm_90 code, or "
                             "ADI3D_BULK_COPIES=off)");
  float* values = nullptr;
  unsigned* wrong = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&values, kRow * kBlocks * sizeof(float)));
  ADI3D_CUDA_CHECK(cudaMalloc(&wrong, sizeof(unsigned)));
  unsigned host_wrong = 0;
  try {
    ADI3D_CUDA_CHECK(cudaMemset(wrong, 0, sizeof(unsigned)));
    bulk_store_rows<<<kBlocks, 128>>>(values);
    ADI3D_CUDA_LAUNCH_CHECK();
    count_wrong<<<kBlocks, kRow>>>(values, wrong);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUDA_CHECK(cudaMemcpy(&host_wrong, wrong, sizeof(unsigned), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(values);
    cudaFree(wrong);
    throw;
  }
  ADI3D_CUDA_CHECK(cudaFree(values));
  ADI3D_CUDA_CHECK(cudaFree(wrong));
  return host_wrong == 0;
}

}  // namespace adi3d::cuda
