// Lines along x by cuSPARSE gtsv2StridedBatch: the baseline a hand-written solver would
// use (and a cross-check), never the default. The coefficients come from the same point
// rules as every other kernel, written into three grid-sized arrays first, so it moves
// 3 more arrays per point than the generated-coefficient kernels. Non-cyclic axes only.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_poison.hpp"
#include "solvers/cuda/line_solves/cusparse_calls.cuh"
#include "solvers/discretization.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace adi3d::cuda {
namespace {

// One handle per device and host thread, kept for the life of the thread (creating one
// costs milliseconds).
cusparseHandle_t handle_for(int device) {
  struct Handles {
    std::map<int, cusparseHandle_t> by_device;
    ~Handles() {
      for (auto& entry : by_device) cusparseDestroy(entry.second);
    }
  };
  thread_local Handles handles;
  auto it = handles.by_device.find(device);
  if (it != handles.by_device.end()) return it->second;
  cusparseHandle_t h = nullptr;
  check_cusparse(cusparseCreate(&h), "cusparseCreate");
  handles.by_device[device] = h;
  return h;
}

template <class T>
__global__ void x_rows_kernel(OperatorView<T> op, T tau, T* a, T* b, T* c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y, k = blockIdx.z;
  if (i >= op.n[0]) return;
  const std::size_t p = i + static_cast<std::size_t>(op.n[0]) * (j + static_cast<std::size_t>(op.n[1]) * k);
  const TriRow<T> row = implicit_row(axis_row(op, 0, i, p, 1), tau);
  // gtsv2 wants the first sub- and last super-diagonal entry of each system to be zero.
  a[p] = i == 0 ? T(0) : row.a;
  b[p] = row.b;
  c[p] = i == op.n[0] - 1 ? T(0) : row.c;
}

}  // namespace

template <class T>
bool launch_cusparse_x(const OperatorView<T>& op, T tau, T* d, int device, cudaStream_t stream) {
  if (op.lo[0] == BoundaryKind::periodic) return false;  // gtsv2 has no cyclic form
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
  const int m = op.n[0], batch = op.n[1] * op.n[2];
  cusparseHandle_t h = handle_for(device);
  check_cusparse(cusparseSetStream(h, stream), "cusparseSetStream");
  // Stream-ordered allocations: the pool keeps the memory between calls.
  T* abc = nullptr;
  ADI3D_CUDA_CHECK(cudaMallocAsync(&abc, 3 * points * sizeof(T), stream));
  poison_device(abc, 3 * points * sizeof(T), stream);
  T *a = abc, *b = abc + points, *c = abc + 2 * points;
  const dim3 block(128), grid((m + 127) / 128, op.n[1], op.n[2]);
  x_rows_kernel<<<grid, block, 0, stream>>>(op, tau, a, b, c);
  ADI3D_CUDA_LAUNCH_CHECK();
  std::size_t bytes = 0;
  check_cusparse(gtsv2_strided_buffer(h, m, a, b, c, d, batch, m, &bytes), "gtsv2StridedBatch_bufferSizeExt");
  void* buffer = nullptr;
  ADI3D_CUDA_CHECK(cudaMallocAsync(&buffer, bytes > 0 ? bytes : 1, stream));
  poison_device(buffer, bytes, stream);
  const cusparseStatus_t status = gtsv2_strided(h, m, a, b, c, d, batch, m, buffer);
  poison_device(buffer, bytes, stream);
  poison_device(abc, 3 * points * sizeof(T), stream);
  ADI3D_CUDA_CHECK(cudaFreeAsync(buffer, stream));
  ADI3D_CUDA_CHECK(cudaFreeAsync(abc, stream));
  check_cusparse(status, "gtsv2StridedBatch");
  return true;
}

template bool launch_cusparse_x(const OperatorView<float>&, float, float*, int, cudaStream_t);
template bool launch_cusparse_x(const OperatorView<double>&, double, double*, int, cudaStream_t);

}  // namespace adi3d::cuda
