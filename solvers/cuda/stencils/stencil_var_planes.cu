// The planes stencil of a variable operator (an alpha field, or its material index):
// the fused variable step's one-kernel x pass without its solve (var_x_pass_kernel with
// kSolve = false, fused_step_var_x_kernel.cuh). u and the coefficients stream through a
// ring of plane slots by bulk copies, each line warp forms r = scale (A u + f) on its
// row's interior nodes, the lanes on chunks of C nodes, and stores the row whole; the
// shell kernel that follows writes the boundary nodes (launch_operator_rhs).
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/fused_step/fused_step_var_x_kernel.cuh"

#include <cuda_runtime.h>

namespace adi3d::cuda {

template <class T>
bool launch_var_planes_stencil(const OperatorView<T>& op, const T* u, const T* f, T scale, T* r, cudaStream_t s) {
  int device = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&device));
  return fused::launch_var_x<T, false>(op, u, f, scale, T(0), r, device, fused::device_limits(device), s);
}

template bool launch_var_planes_stencil<float>(const OperatorView<float>&, const float*, const float*, float, float*,
                                               cudaStream_t);
template bool launch_var_planes_stencil<double>(const OperatorView<double>&, const double*, const double*, double,
                                                double*, cudaStream_t);

}  // namespace adi3d::cuda
