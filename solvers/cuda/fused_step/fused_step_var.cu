// Launches of the fused Douglas step for a node diffusivity field. Pass x: one kernel that
// forms the rhs and solves (fused_step_var_x_kernel.cuh: u and the material index, or
// alpha, in; d out) where it applies; else the stencil and the x solve apart (from alpha
// by a warp per line, x_line_var_kernel.cuh, else the tridiag library's). (A
// warp-per-line solve with the rhs formed inside, the x pass of fused_step_kernels.cuh
// with alpha, ran 3.7 ms at 512^3 float on an H100, latency-bound by the harmonic means'
// and pivots' divisions, against about 1.5 ms for the two apart; the tridiag library's
// generated rows forming the rhs themselves from u and its four neighbour lines, material
// index, ran 1.36 ms, issue-bound, against 1.38 for the two apart; the one kernel, with a
// producer warp and the partition solve, 0.72 ms from alpha and 0.50 by index.) Passes y
// and z are fused (fused_step_var_kernels.cuh): y solves in place, z solves and adds to
// u. Arrays per point: 10 with alpha and the one-kernel x pass (13 with the two; 11 and 14
// with a source), against 15 for the unfused step; 7 and three reads of the index with it.
// Neumann faces: their nodes are unknowns of every pass, their rows solved halved (the
// symmetric form of the warp solve): the x pass halves the x end rows and the rhs of the
// lines on a Neumann y or z face, so that the y and z tiles take their rhs halved.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step_var.hpp"
#include "solvers/cuda/fused_step/fused_step_var_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_var_x_kernel.cuh"
#include "solvers/cuda/line_solves/x_line_var_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace adi3d::cuda {
namespace {

// fused_variable_x_pass on the device of limits. With Neumann faces (unknown_faces, bit
// face_index) the stencil and the plain x solve take the unknowns (the solve halves a
// Neumann x end's row itself), and the faces' scale (the rhs of the lines on a Neumann y
// or z face halved, as the one kernel's: ends_scale) between them; 0, launching nothing,
// where the plain solve does not take the lines.
template <class T>
int x_pass(const OperatorView<T>& op, const T* u, const T* f, T dt, T tau, T* d, int device,
           const fused::DeviceLimits& limits, cudaStream_t s, bool variable_x_pass, int unknown_faces = 0) {
  if (variable_x_pass && fused::launch_var_x<T, true>(op, u, f, dt, tau, d, device, limits, s, unknown_faces))
    return 1;
  int first[3], last[3];
  for (int axis = 0; axis < 3; ++axis) {
    first[axis] = fused::first_unknown(op, axis);
    last[axis] = fused::last_unknown(op, axis);
  }
  const fused::VarSolveArgs<T> lines = fused::var_solve_args(op, first, last, tau, d);
  const fused::XLineVarLaunch<T> warp_lines =
      op.alpha_field ? fused::x_line_var_launch(lines, limits) : fused::XLineVarLaunch<T>{};
  if (unknown_faces && !warp_lines.kernel) return 0;
  launch_operator_rhs(CudaPolicy{}.stencil, op, u, f, FacePtrs<T>{}, dt, d, s);
  Grid3 grid;
  for (int axis = 0; axis < 3; ++axis) grid.n[axis] = op.n[axis];
  for (int face = face_index(1, 0); face <= face_index(2, 1); ++face)
    if ((unknown_faces >> face) & 1) launch_scale_face(grid, face, T(0.5), d, s);
  // The lines by a warp per line where its rows fit, by the material index where there
  // is one, else from alpha (x_line_var_kernel.cuh; 512^3 double plain x solve from alpha
  // 1.14 ms against the library's 1.30).
  if (fused::launch_x_line_var(lines, warp_lines, limits, s)) return 2;
  if (!launch_tridiag_generated_x(op, tau, d, s))
    throw std::logic_error("fused_variable_step: x lines outside the generated-row solve");
  return 2;
}

}  // namespace

template <class T>
bool fused_variable_applies(const OperatorView<T>& op, int device) {
  const bool neumann = fused::unknown_face_mask(op) != 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (op.lo[axis] == BoundaryKind::periodic || op.n[axis] < 1) return false;
    // A Neumann face's ghost mirrors the node inside it, and only the one-kernel x pass
    // (3 nodes an axis) takes Neumann faces.
    if (neumann && op.n[axis] < 3) return false;
  }
  if (neumann ? fused::unknowns_chunk_cap(op, 0) == 0 : op.n[0] > LineSolvePolicy::tridiag_generated_max_rows)
    return false;
  const int optin = fused::device_limits(device).optin;
  for (int axis = 1; axis < 3; ++axis) {
    const int n = op.n[axis];
    if (n < 3) continue;  // nothing to solve
    const int cap = fused::unknowns_chunk_cap(op, axis);
    if (cap == 0) return false;
    // The smallest tiles var_tile_launch takes: one buffer.
    const std::size_t smem = fused::with_var_kinds(op.material != nullptr, neumann, [&](auto material, auto faces) {
      constexpr bool kMaterial = decltype(material)::value;
      return fused::with_chunk_cap(cap, [&](auto C) {
        return fused::yz_var_smem_bytes<T, fused::var_tile_lines<T, kMaterial>(), C.value, false, 1, kMaterial, false,
                                        decltype(faces)::value>(n);
      });
    });
    if (smem > static_cast<std::size_t>(optin)) return false;
  }
  return true;
}

template <class T>
int fused_variable_x_pass(const OperatorView<T>& op, const T* u, const T* f, T dt, T tau, T* d, int device,
                          CUstream_st* stream, bool variable_x_pass) {
  return x_pass(op, u, f, dt, tau, d, device, fused::device_limits(device), stream, variable_x_pass);
}

template <class T>
int fused_variable_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, int device,
                        CUstream_st* stream, bool variable_x_pass) {
  const cudaStream_t s = stream;
  const fused::DeviceLimits limits = fused::device_limits(device);
  const int neumann = fused::unknown_face_mask(op);
  const int x_kernels = x_pass<T>(op, u, f, dt, tau, d, device, limits, s, variable_x_pass, neumann);
  if (x_kernels == 0) return 0;
  fused::VarPassArgs<T> args{};
  fused::take_operator(args, op);
  args.tau = tau;
  args.alpha = op.alpha_field;
  args.d = d;
  args.u = u;
  args.unknown_faces = neumann;
  for (int axis = 1; axis < 3; ++axis) {
    const int n = op.n[axis];
    const int cap = fused::unknowns_chunk_cap(op, axis);
    const auto launch = fused::with_var_kinds(op.material != nullptr, neumann != 0, [&](auto material, auto faces) {
      return fused::var_tile_launch<T, false, decltype(material)::value, decltype(faces)::value>(axis, n, cap,
                                                                                               limits.optin);
    });
    // Persistent blocks, one wave.
    const int per_sm = fused::blocks_per_sm(launch.kernel, launch.smem, launch.threads, limits);
    const int tiles = (op.n[0] + launch.lines - 1) / launch.lines * fused::unknowns(op, axis == 2 ? 1 : 2);
    launch.kernel<<<std::min(tiles, std::max(1, per_sm) * limits.sms), launch.threads, launch.smem, s>>>(args);
    ADI3D_CUDA_LAUNCH_CHECK();
  }
  return x_kernels;
}

template bool fused_variable_applies<float>(const OperatorView<float>&, int);
template bool fused_variable_applies<double>(const OperatorView<double>&, int);
template int fused_variable_x_pass<float>(const OperatorView<float>&, const float*, const float*, float, float,
                                          float*, int, CUstream_st*, bool);
template int fused_variable_x_pass<double>(const OperatorView<double>&, const double*, const double*, double,
                                           double, double*, int, CUstream_st*, bool);
template int fused_variable_step<float>(const OperatorView<float>&, float*, const float*, float, float, float*, int,
                                        CUstream_st*, bool);
template int fused_variable_step<double>(const OperatorView<double>&, double*, const double*, double, double,
                                         double*, int, CUstream_st*, bool);

}  // namespace adi3d::cuda
