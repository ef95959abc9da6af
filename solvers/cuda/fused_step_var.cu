// Launches of the fused Douglas step for a node diffusivity field. Pass x is not fused:
// a warp-per-line solve with the rhs formed inside (x pass of fused_step_kernels.cuh with
// alpha) ran 3.7 ms at 512^3 float on an H100, latency-bound by its dependent chain of
// divisions at 16 warps per SM, against about 1.5 ms for the stencil and the tridiag
// library's x solve apart. Passes y and z are fused (fused_step_var_kernels.cuh): y solves
// in place, z solves and adds to u. 13 arrays per point (14 with a source), against 15
// for the unfused step.
#include "solvers/cuda/cuda_backend.cuh"
#include "solvers/cuda/cuda_check.hpp"
#include "solvers/cuda/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step_var.hpp"
#include "solvers/cuda/fused_step_var_kernels.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace adi3d::cuda {
template <class T>
bool fused_variable_applies(const OperatorView<T>& op, int device) {
  for (int axis = 0; axis < 3; ++axis)
    if (op.lo[axis] != BoundaryKind::dirichlet || op.hi[axis] != BoundaryKind::dirichlet) return false;
  if (op.n[0] < 1 || op.n[0] > LineSolvePolicy::tridiag_generated_max_rows) return false;
  int optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  for (int axis = 1; axis < 3; ++axis) {
    const int n = op.n[axis];
    if (n < 1) return false;
    if (n < 3) continue;  // nothing to solve
    const int cap = fused::chunk_cap(n);
    if (cap == 0 || fused::yz_var_smem_bytes<T, fused::kVarYZLines<T>>(n) > static_cast<std::size_t>(optin))
      return false;
  }
  return true;
}

template <class T>
void fused_variable_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, int device,
                         CUstream_st* stream) {
  const cudaStream_t s = stream;
  launch_operator_rhs(CudaPolicy{}.stencil, op, u, f, FacePtrs<T>{}, dt, d, s);
  if (!launch_tridiag_generated_x(op, tau, d, s))
    throw std::logic_error("fused_variable_step: x lines outside the generated-row solve");
  int sms = 0, optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  fused::VarPassArgs<T> args{};
  for (int axis = 0; axis < 3; ++axis) {
    args.n[axis] = op.n[axis];
    args.inv_h2[axis] = op.inv_h2[axis];
  }
  args.tau = tau;
  args.alpha = op.alpha_field;
  args.d = d;
  args.u = u;
  args.material = op.material;
  args.material_face_mean = op.material_face_mean;
  args.material_pitch = op.material_pitch;
  for (int axis = 1; axis < 3; ++axis) {
    const int n = op.n[axis];
    const int cap = fused::chunk_cap(n);
    const auto launch = op.material ? fused::var_tile_launch<T, false, true>(axis, n, cap, optin)
                                    : fused::var_tile_launch<T, false>(axis, n, cap, optin);
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(launch.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(launch.smem)));
    // Persistent blocks, one wave.
    int per_sm = 0;
    ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, launch.kernel, launch.threads, launch.smem));
    const int other_n = axis == 2 ? op.n[1] : op.n[2];
    const int tiles = (op.n[0] + fused::kVarYZLines<T> - 1) / fused::kVarYZLines<T> * (other_n - 2);
    launch.kernel<<<std::min(tiles, std::max(1, per_sm) * sms), launch.threads, launch.smem, s>>>(args);
    ADI3D_CUDA_LAUNCH_CHECK();
  }
}

template bool fused_variable_applies<float>(const OperatorView<float>&, int);
template bool fused_variable_applies<double>(const OperatorView<double>&, int);
template void fused_variable_step<float>(const OperatorView<float>&, float*, const float*, float, float,
                                         float*, int, CUstream_st*);
template void fused_variable_step<double>(const OperatorView<double>&, double*, const double*, double,
                                          double, double*, int, CUstream_st*);

}  // namespace adi3d::cuda
