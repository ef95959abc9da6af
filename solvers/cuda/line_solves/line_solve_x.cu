// Batched line solves along x (contiguous lines), one block per line: the hybrid
// PCR-Thomas base kernel of Davidson, Zhang & Owens (IPDPS 2011, seed 002). The line's
// rows are generated on the fly into shared memory, parallel cyclic reduction splits it
// into P interleaved subsystems, and P threads finish them with Thomas sweeps. Periodic
// lines: Sherman-Morrison around the same solve (second right-hand side carried along).
// Moves 2 arrays per point (d in, x out) plus alpha when it is a field.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/discretization.hpp"
#include "solvers/thomas.hpp"

namespace adi3d::cuda {
namespace {

constexpr int R = LineSolvePolicy::pcr_rows_per_thread;

template <class T, bool kConstAlpha, bool kCyclic>
__global__ void __launch_bounds__(LineSolvePolicy::pcr_max_threads)
    pcr_thomas_kernel(OperatorView<T> op, T tau, T* __restrict__ d, int subsystems) {
  extern __shared__ unsigned char smem_raw[];
  if (kConstAlpha) op.alpha_field = nullptr;
  const int n = op.n[0];
  const int nt = blockDim.x, tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * n;
  T* sa = reinterpret_cast<T*>(smem_raw);
  T* sb = sa + n;
  T* sc = sb + n;
  T* sd = sc + n;
  T* sz = sd + n;  // Sherman-Morrison right-hand side (cyclic only)

  // Corner entries and the Sherman-Morrison shift (thomas.hpp, CyclicCorrection).
  CyclicCorrection<T> sm{T(1), T(0), T(0)};
  if (kCyclic) {
    const TriRow<T> r0 = implicit_row(axis_row(op, 0, 0, base, 1), tau);
    sm = CyclicCorrection<T>::from_corners(r0.a, r0.b, implicit_row(axis_row(op, 0, n - 1, base + n - 1, 1), tau).c);
  }
  // Load: rows m = tid + r*nt, so a warp reads consecutive entries of d.
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int m = tid + r * nt;
    if (m >= n) break;
    const TriRow<T> row = implicit_row(axis_row(op, 0, m, base + m, 1), tau);
    T bb = row.b, zz = T(0);
    if (kCyclic) {
      sm.modify_row(m, n, bb, zz);
      sz[m] = zz;
    }
    sa[m] = m == 0 ? T(0) : row.a;  // the corners belong to the rank-one correction
    sb[m] = bb;
    sc[m] = m == n - 1 ? T(0) : row.c;
    sd[m] = d[base + m];
  }
  __syncthreads();

  // PCR (Hockney; seed 002 §III): row m eliminates rows m -+ delta, after which it couples
  // to m -+ 2 delta. After log2(P) steps the rows t, t+P, t+2P, ... form P independent
  // systems. New rows go through registers so every read of a step sees the old values.
  for (int delta = 1; delta < subsystems; delta *= 2) {
    T na[R], nb[R], nc[R], nd[R], nz[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int m = tid + r * nt;
      if (m >= n) break;
      T a = sa[m], b = sb[m], c = sc[m], rhs = sd[m], zr = kCyclic ? sz[m] : T(0);
      T a_new = T(0), c_new = T(0);
      if (m - delta >= 0) {
        const T k1 = a / sb[m - delta];
        a_new = -sa[m - delta] * k1;
        b -= sc[m - delta] * k1;
        rhs -= sd[m - delta] * k1;
        if (kCyclic) zr -= sz[m - delta] * k1;
      }
      if (m + delta < n) {
        const T k2 = c / sb[m + delta];
        c_new = -sc[m + delta] * k2;
        b -= sa[m + delta] * k2;
        rhs -= sd[m + delta] * k2;
        if (kCyclic) zr -= sz[m + delta] * k2;
      }
      na[r] = a_new;
      nb[r] = b;
      nc[r] = c_new;
      nd[r] = rhs;
      nz[r] = zr;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int m = tid + r * nt;
      if (m >= n) break;
      sa[m] = na[r];
      sb[m] = nb[r];
      sc[m] = nc[r];
      sd[m] = nd[r];
      if (kCyclic) sz[m] = nz[r];
    }
    __syncthreads();
  }

  // Thomas on subsystem t (rows t, t+P, ...): c becomes the modified upper diagonal and d
  // (z) the forward-eliminated right-hand side, then back substitution in place.
  const int P = subsystems;
  if (tid < P) {
    int prev = -1;
    for (int m = tid; m < n; m += P) {
      const T a = prev < 0 ? T(0) : sa[m];
      const T cprev = prev < 0 ? T(0) : sc[prev];
      const T inv = T(1) / (sb[m] - a * cprev);
      sc[m] *= inv;
      sd[m] = (sd[m] - a * (prev < 0 ? T(0) : sd[prev])) * inv;
      if (kCyclic) sz[m] = (sz[m] - a * (prev < 0 ? T(0) : sz[prev])) * inv;
      prev = m;
    }
    for (int m = prev - P; m >= 0; m -= P) {
      sd[m] -= sc[m] * sd[m + P];
      if (kCyclic) sz[m] -= sc[m] * sz[m + P];
    }
  }
  __syncthreads();

  T factor = T(0);
  if (kCyclic)
    factor = sm.factor(sd[0], sd[n - 1], sz[0], sz[n - 1]);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int m = tid + r * nt;
    if (m >= n) break;
    d[base + m] = kCyclic ? sd[m] - factor * sz[m] : sd[m];
  }
}

int next_pow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

template <class T, bool kConstAlpha, bool kCyclic>
void launch(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  const int n = op.n[0];
  const int threads = std::min(LineSolvePolicy::pcr_max_threads,
                               std::max(32, next_pow2((n + R - 1) / R)));
  // PCR until the subsystems are about pcr_thomas_rows long (seed 002: the PCR-Thomas
  // switch point; a tuning parameter), at most one subsystem per thread.
  int subsystems = 1;
  while (subsystems * 2 <= threads && subsystems * 2 * LineSolvePolicy::pcr_thomas_rows <= n)
    subsystems *= 2;
  const std::size_t bytes = (kCyclic ? 5 : 4) * static_cast<std::size_t>(n) * sizeof(T);
  const unsigned lines = static_cast<unsigned>(static_cast<std::size_t>(op.n[1]) * op.n[2]);
  pcr_thomas_kernel<T, kConstAlpha, kCyclic><<<lines, threads, bytes, s>>>(op, tau, d, subsystems);
  ADI3D_CUDA_LAUNCH_CHECK();
}

}  // namespace

template <class T>
bool launch_pcr_thomas_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  const int n = op.n[0];
  if (n > LineSolvePolicy::pcr_max_n) return false;
  // 5 arrays of n rows must fit the default 48 KiB of shared memory.
  static_assert(5 * LineSolvePolicy::pcr_max_n * sizeof(double) <= 48 * 1024, "shared memory");
  if (n <= 0 || op.n[1] <= 0 || op.n[2] <= 0) return true;
  const bool cyclic = op.lo[0] == BoundaryKind::periodic;
  const bool constant = op.alpha_field == nullptr;
  if (cyclic) {
    if (constant) launch<T, true, true>(op, tau, d, s);
    else launch<T, false, true>(op, tau, d, s);
  } else {
    if (constant) launch<T, true, false>(op, tau, d, s);
    else launch<T, false, false>(op, tau, d, s);
  }
  return true;
}

template bool launch_pcr_thomas_x<float>(const OperatorView<float>&, float, float*, cudaStream_t);
template bool launch_pcr_thomas_x<double>(const OperatorView<double>&, double, double*,
                                          cudaStream_t);

}  // namespace adi3d::cuda
