// Batched line solves (I - tau A_axis) x = d, one Thomas sweep per thread; used for lines
// along y and z (threads hold lines adjacent in x, so every row access is coalesced) and
// as the simple fallback for x lines. Coefficients are generated on the fly (axis_row,
// implicit_row); periodic axes add Sherman-Morrison around the same sweep. Moves 2 arrays
// per point when the scratch fits in shared memory, 6 (12 cyclic) with global scratch, 4
// (6 cyclic) on the constant-coefficient path.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/discretization.hpp"
#include "solvers/thomas.hpp"

namespace adi3d::cuda {
namespace {

struct LineSet {
  int n;               // rows per line
  std::size_t stride;  // distance of consecutive rows
  long long lines;
};

__host__ __device__ LineSet line_set(const int n[3], int axis) {
  const std::size_t nx = n[0], nxy = static_cast<std::size_t>(n[0]) * n[1];
  if (axis == 0) return {n[0], 1, static_cast<long long>(n[1]) * n[2]};
  if (axis == 1) return {n[1], nx, static_cast<long long>(n[0]) * n[2]};
  return {n[2], nxy, static_cast<long long>(nxy)};
}

// First row of line q; consecutive q are neighbours in x for the y and z axes.
__device__ std::size_t line_base(const int n[3], int axis, long long q) {
  if (axis == 0) return static_cast<std::size_t>(q) * n[0];
  if (axis == 1) {
    const long long i = q % n[0], k = q / n[0];
    return static_cast<std::size_t>(i) + static_cast<std::size_t>(n[0]) * n[1] * k;
  }
  return static_cast<std::size_t>(q);
}

// Scratch row m of this thread's line: interleaved by thread in shared memory (bank
// conflict free), or laid out like the grid in global memory (coalesced).
template <class T, bool kShared>
struct Scratch {
  T* base;
  std::size_t step;
  __device__ T& operator[](int m) const { return base[m * step]; }
};

// The axis is a template parameter: a runtime index into the view's per-axis arrays would
// copy the whole view to local memory.
template <class T, int axis, bool kCyclic, bool kShared>
__global__ void thread_thomas_kernel(OperatorView<T> op, T tau, T* __restrict__ d,
                                     T* __restrict__ scratch) {
  extern __shared__ unsigned char smem_raw[];
  const LineSet ls = line_set(op.n, axis);
  const long long q = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (q >= ls.lines) return;  // no barriers below
  const int n = ls.n;
  const std::size_t s = ls.stride;
  const std::size_t base = line_base(op.n, axis, q);
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];

  Scratch<T, kShared> cp, xd, z;
  if (kShared) {
    T* sm = reinterpret_cast<T*>(smem_raw);
    const std::size_t array = static_cast<std::size_t>(n) * blockDim.x;
    cp = {sm + threadIdx.x, blockDim.x};
    xd = {sm + array + threadIdx.x, blockDim.x};
    z = {sm + 2 * array + threadIdx.x, blockDim.x};
  } else {
    cp = {scratch + base, s};
    xd = {d + base, s};  // the solution overwrites d in place
    z = {scratch + points + base, s};
  }

  // Sherman-Morrison (thomas.hpp, CyclicCorrection) from the corner entries.
  CyclicCorrection<T> sm{T(1), T(0), T(0)};
  if (kCyclic) {
    const TriRow<T> r0 = implicit_row(axis_row(op, axis, 0, base, s), tau);
    sm = CyclicCorrection<T>::from_corners(
        r0.a, r0.b, implicit_row(axis_row(op, axis, n - 1, base + (n - 1) * s, s), tau).c);
  }

  // Forward sweep; the previous row's values stay in registers.
  T cp_prev = T(0), d_prev = T(0), z_prev = T(0);
  for (int m = 0; m < n; ++m) {
    const std::size_t p = base + m * s;
    const TriRow<T> row = implicit_row(axis_row(op, axis, m, p, s), tau);
    T bb = row.b, zz = T(0);
    if (kCyclic) sm.modify_row(m, n, bb, zz);
    const T a = m == 0 ? T(0) : row.a;
    const T inv = T(1) / (bb - a * cp_prev);
    cp_prev = row.c * inv;
    d_prev = (d[p] - a * d_prev) * inv;
    cp[m] = cp_prev;
    xd[m] = d_prev;
    if (kCyclic) {
      z_prev = (zz - a * z_prev) * inv;
      z[m] = z_prev;
    }
  }
  // Backward sweep.
  T x_next = d_prev, z_next = z_prev;
  if (!kCyclic && kShared) d[base + (n - 1) * s] = x_next;
  for (int m = n - 2; m >= 0; --m) {
    x_next = xd[m] - cp[m] * x_next;
    if (kCyclic) {
      z_next = z[m] - cp[m] * z_next;
      z[m] = z_next;
      xd[m] = x_next;
    } else if (kShared) {
      d[base + m * s] = x_next;
    } else {
      xd[m] = x_next;
    }
  }
  if (kCyclic) {
    // x_next, z_next now hold row 0; xd/z hold the full solutions of both systems.
    const T factor = sm.factor(x_next, xd[n - 1], z_next, z[n - 1]);
    for (int m = 0; m < n; ++m) d[base + m * s] = xd[m] - factor * z[m];
  }
}

// Constant alpha: every line along the axis has the same matrix (row kinds depend on the
// row index alone), so the elimination factors are the same for all lines. One thread
// forms them once per call, by the same recurrence as thread_thomas_kernel, into 4n
// values: a, the modified upper diagonal cp, the pivots' inverses, and the solution z of
// the Sherman-Morrison system (cyclic). Each line then only streams its own d.
template <class T, int axis, bool kCyclic>
__global__ void prepare_constant_kernel(OperatorView<T> op, T tau, T* __restrict__ coef) {
  op.alpha_field = nullptr;
  const int n = op.n[axis];
  const std::size_t s = line_set(op.n, axis).stride;
  T* ca = coef;
  T* ccp = coef + n;
  T* cinv = coef + 2 * n;
  T* cz = coef + 3 * n;
  CyclicCorrection<T> sm{T(1), T(0), T(0)};
  if (kCyclic) {
    const TriRow<T> r0 = implicit_row(axis_row(op, axis, 0, 0, s), tau);
    sm = CyclicCorrection<T>::from_corners(r0.a, r0.b,
                                           implicit_row(axis_row(op, axis, n - 1, (n - 1) * s, s), tau).c);
  }
  T cp_prev = T(0), z_prev = T(0);
  for (int m = 0; m < n; ++m) {
    const TriRow<T> row = implicit_row(axis_row(op, axis, m, m * s, s), tau);
    T bb = row.b, zz = T(0);
    if (kCyclic) sm.modify_row(m, n, bb, zz);
    const T a = m == 0 ? T(0) : row.a;
    const T inv = T(1) / (bb - a * cp_prev);
    cp_prev = row.c * inv;
    ca[m] = a;
    ccp[m] = cp_prev;
    cinv[m] = inv;
    if (kCyclic) {
      z_prev = (zz - a * z_prev) * inv;
      cz[m] = z_prev;
    }
  }
  if (kCyclic)
    for (int m = n - 2; m >= 0; --m) cz[m] = cz[m] - ccp[m] * cz[m + 1];
}

template <class T, int axis, bool kCyclic>
__global__ void constant_thomas_kernel(OperatorView<T> op, T tau, T* __restrict__ d,
                                       const T* __restrict__ coef) {
  op.alpha_field = nullptr;
  const LineSet ls = line_set(op.n, axis);
  const long long q = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (q >= ls.lines) return;
  const int n = ls.n;
  const std::size_t s = ls.stride;
  const std::size_t base = line_base(op.n, axis, q);
  // Every thread reads the same coefficient: one broadcast load per warp.
  const T* ca = coef;
  const T* ccp = coef + n;
  const T* cinv = coef + 2 * n;
  const T* cz = coef + 3 * n;
  T d_prev = T(0);
  for (int m = 0; m < n; ++m) {
    const std::size_t p = base + m * s;
    d_prev = (d[p] - ca[m] * d_prev) * cinv[m];
    d[p] = d_prev;
  }
  T x_next = d_prev;
  for (int m = n - 2; m >= 0; --m) {
    const std::size_t p = base + m * s;
    x_next = d[p] - ccp[m] * x_next;
    d[p] = x_next;
  }
  if (kCyclic) {
    const TriRow<T> r0 = implicit_row(axis_row(op, axis, 0, base, s), tau);
    // beta is not needed for the factor
    const CyclicCorrection<T> sm = CyclicCorrection<T>::from_corners(r0.a, r0.b, T(0));
    const T factor = sm.factor(x_next, d[base + (n - 1) * s], cz[0], cz[n - 1]);
    for (int m = 0; m < n; ++m) {
      const std::size_t p = base + m * s;
      d[p] = d[p] - factor * cz[m];
    }
  }
}

enum class ThomasPath { constant, shared, global };
struct ThomasPlan {
  ThomasPath path;
  int shared_block;  // lines per block on the shared path
};

template <class T>
ThomasPlan thomas_plan(const OperatorView<T>& op, int axis, const CudaPolicy& policy) {
  if (policy.constant_coefficients && lines_alike(op, axis)) return {ThomasPath::constant, 0};
  if (policy.yz_scratch == LineScratch::global) return {ThomasPath::global, 0};
  const bool cyclic = op.lo[axis] == BoundaryKind::periodic;
  const std::size_t arrays = cyclic ? 3 : 2;
  const int n = op.n[axis];
  // automatic keeps 64-line blocks only (fewer lines per block starve the SM of warps);
  // shared also accepts 32-line blocks. Untuned: the switch belongs to `adi3d tune`.
  const int smallest =
      policy.yz_scratch == LineScratch::shared ? 32 : LineSolvePolicy::shared_thomas_block;
  for (int threads = LineSolvePolicy::shared_thomas_block; threads >= smallest; threads /= 2)
    if (arrays * n * static_cast<std::size_t>(threads) * sizeof(T) <=
        LineSolvePolicy::shared_scratch_bytes)
      return {ThomasPath::shared, threads};
  return {ThomasPath::global, 0};
}

template <class T, int axis, bool kCyclic>
void launch_line_kernel(const OperatorView<T>& op, T tau, T* d, T* scratch,
                        const CudaPolicy& policy, bool factors_ready, cudaStream_t s) {
  const LineSet ls = line_set(op.n, axis);
  const ThomasPlan plan = thomas_plan(op, axis, policy);
  if (plan.path == ThomasPath::constant) {
    if (!factors_ready) {
      prepare_constant_kernel<T, axis, kCyclic><<<1, 1, 0, s>>>(op, tau, scratch);
      ADI3D_CUDA_LAUNCH_CHECK();
    }
    const int threads = LineSolvePolicy::thread_thomas_block;
    const unsigned blocks = static_cast<unsigned>((ls.lines + threads - 1) / threads);
    constant_thomas_kernel<T, axis, kCyclic><<<blocks, threads, 0, s>>>(op, tau, d, scratch);
  } else if (plan.path == ThomasPath::shared) {
    const std::size_t arrays = kCyclic ? 3 : 2;
    const std::size_t bytes = arrays * ls.n * static_cast<std::size_t>(plan.shared_block) * sizeof(T);
    const unsigned blocks = static_cast<unsigned>((ls.lines + plan.shared_block - 1) / plan.shared_block);
    thread_thomas_kernel<T, axis, kCyclic, true>
        <<<blocks, plan.shared_block, bytes, s>>>(op, tau, d, nullptr);
  } else {
    const int threads = LineSolvePolicy::thread_thomas_block;
    const unsigned blocks = static_cast<unsigned>((ls.lines + threads - 1) / threads);
    thread_thomas_kernel<T, axis, kCyclic, false><<<blocks, threads, 0, s>>>(op, tau, d, scratch);
  }
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T, int axis>
void launch_axis(const OperatorView<T>& op, T tau, T* d, T* scratch, const CudaPolicy& policy,
                 bool factors_ready, cudaStream_t s) {
  if (op.lo[axis] == BoundaryKind::periodic)
    launch_line_kernel<T, axis, true>(op, tau, d, scratch, policy, factors_ready, s);
  else
    launch_line_kernel<T, axis, false>(op, tau, d, scratch, policy, factors_ready, s);
}

}  // namespace

template <class T>
bool thread_thomas_constant_path(const OperatorView<T>& op, int axis, const CudaPolicy& policy) {
  return thomas_plan(op, axis, policy).path == ThomasPath::constant;
}

template <class T>
std::size_t thread_thomas_scratch_size(const OperatorView<T>& op, int axis,
                                       const CudaPolicy& policy) {
  const ThomasPlan plan = thomas_plan(op, axis, policy);
  if (plan.path == ThomasPath::constant) return 4 * static_cast<std::size_t>(op.n[axis]);
  if (plan.path == ThomasPath::shared) return 0;
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
  return (op.lo[axis] == BoundaryKind::periodic ? 2 : 1) * points;
}

template <class T>
void launch_thread_thomas(const OperatorView<T>& op, int axis, T tau, T* d, T* scratch,
                          const CudaPolicy& policy, bool factors_ready, cudaStream_t s) {
  if (line_set(op.n, axis).lines == 0 || op.n[axis] == 0) return;
  switch (axis) {
    case 0: launch_axis<T, 0>(op, tau, d, scratch, policy, factors_ready, s); break;
    case 1: launch_axis<T, 1>(op, tau, d, scratch, policy, factors_ready, s); break;
    default: launch_axis<T, 2>(op, tau, d, scratch, policy, factors_ready, s); break;
  }
}

template std::size_t thread_thomas_scratch_size<float>(const OperatorView<float>&, int,
                                                       const CudaPolicy&);
template std::size_t thread_thomas_scratch_size<double>(const OperatorView<double>&, int,
                                                        const CudaPolicy&);
template bool thread_thomas_constant_path<float>(const OperatorView<float>&, int,
                                                 const CudaPolicy&);
template bool thread_thomas_constant_path<double>(const OperatorView<double>&, int,
                                                  const CudaPolicy&);
template void launch_thread_thomas<float>(const OperatorView<float>&, int, float, float*, float*,
                                          const CudaPolicy&, bool, cudaStream_t);
template void launch_thread_thomas<double>(const OperatorView<double>&, int, double, double*,
                                           double*, const CudaPolicy&, bool, cudaStream_t);

}  // namespace adi3d::cuda
