// Batched line solves along x (contiguous lines), one block per line, with the line
// packed into registers: each thread holds K consecutive rows (K = 4, 8 or 16), removes
// its interior unknowns by elimination in registers, and leaves two rows per thread that
// form a tridiagonal system of 2 x threads rows, solved by parallel cyclic reduction in
// shared memory; each thread then recovers its interior rows. Register packing after
// Davidson & Owens (GPGPU-4 2011, seed 000): O(n) work in registers, shared memory only
// for the exchange. Rows are generated from the point rules. Moves 2 arrays per point
// (d in, x out) plus alpha when it is a field. Periodic lines use PCR-Thomas instead.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/discretization.hpp"

namespace adi3d::cuda {
namespace {

constexpr int kMaxThreads = 256;

template <class T, int K, bool kConstAlpha>
__global__ void __launch_bounds__(kMaxThreads) register_cr_kernel(OperatorView<T> op, T tau, T* __restrict__ d) {
  extern __shared__ unsigned char smem_raw[];
  T* stage = reinterpret_cast<T*>(smem_raw);
  if (kConstAlpha) op.alpha_field = nullptr;
  const int n = op.n[0], nt = blockDim.x, tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * n;

  // Coalesced load of the line; thread t's rows sit at t*(K+1) + q (padded: no bank
  // conflicts when the threads read their K rows).
  for (int e = tid; e < nt * K; e += nt) stage[(e / K) * (K + 1) + e % K] = e < n ? d[base + e] : T(0);
  __syncthreads();

  // Rows of this thread in registers. Rows past the end are identity rows: they never
  // couple, because row n-1 has no upper neighbour on a non-periodic axis.
  T a[K], b[K], c[K], r[K];
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const int e = tid * K + q;
    if (e < n) {
      const TriRow<T> row = implicit_row(axis_row(op, 0, e, base + e, 1), tau);
      a[q] = e == 0 ? T(0) : row.a;
      b[q] = row.b;
      c[q] = e == n - 1 ? T(0) : row.c;
    } else {
      a[q] = T(0);
      b[q] = T(1);
      c[q] = T(0);
    }
    r[q] = stage[tid * (K + 1) + q];
  }
  __syncthreads();  // the staging buffer is reused for the reduced system below

  // Downward: rows q >= 1 in the form alpha x_0 + beta x_q + c x_{q+1} = delta (a, b, r
  // hold alpha, beta, delta).
#pragma unroll
  for (int q = 2; q < K; ++q) {
    const T m = a[q] / b[q - 1];
    a[q] = -m * a[q - 1];
    b[q] -= m * c[q - 1];
    r[q] -= m * r[q - 1];
  }
  // Upward: rows 1..K-2 in the form alpha' x_0 + beta x_q + gamma' x_{K-1} = delta'
  // (a, c, r hold alpha', gamma', delta').
#pragma unroll
  for (int q = K - 3; q >= 1; --q) {
    const T m = c[q] / b[q + 1];
    a[q] -= m * a[q + 1];
    c[q] = -m * c[q + 1];
    r[q] -= m * r[q + 1];
  }
  // The two rows that remain: the chunk's first row, coupled to the previous chunk's last
  // row and this chunk's last row; the last row, coupled to this chunk's first row and the
  // next chunk's first.
  T a0 = a[0], b0 = b[0], c0 = c[0], d0 = r[0];
  if (K > 2) {
    const T m = c[0] / b[1];
    b0 -= m * a[1];
    c0 = -m * c[1];
    d0 -= m * r[1];
  }
  T* ra = stage;
  T* rb = ra + 2 * nt;
  T* rc = rb + 2 * nt;
  T* rd = rc + 2 * nt;
  const int f = 2 * tid, l = 2 * tid + 1, rows = 2 * nt;
  ra[f] = a0;
  rb[f] = b0;
  rc[f] = c0;
  rd[f] = d0;
  ra[l] = a[K - 1];
  rb[l] = b[K - 1];
  rc[l] = c[K - 1];
  rd[l] = r[K - 1];
  __syncthreads();

  // PCR on the reduced system (Hockney): each step doubles the coupling distance.
  for (int delta = 1; delta < rows; delta *= 2) {
    T na[2], nb[2], nc[2], nd[2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const int m = f + s;
      T am = T(0), cm = T(0), bm = rb[m], dm = rd[m];
      if (m - delta >= 0) {
        const T k1 = ra[m] / rb[m - delta];
        am = -ra[m - delta] * k1;
        bm -= rc[m - delta] * k1;
        dm -= rd[m - delta] * k1;
      }
      if (m + delta < rows) {
        const T k2 = rc[m] / rb[m + delta];
        cm = -rc[m + delta] * k2;
        bm -= ra[m + delta] * k2;
        dm -= rd[m + delta] * k2;
      }
      na[s] = am;
      nb[s] = bm;
      nc[s] = cm;
      nd[s] = dm;
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      ra[f + s] = na[s];
      rb[f + s] = nb[s];
      rc[f + s] = nc[s];
      rd[f + s] = nd[s];
    }
    __syncthreads();
  }
  const T x_first = rd[f] / rb[f], x_last = rd[l] / rb[l];
  __syncthreads();

  // Interior rows from the two ends, then a coalesced store through the staging buffer.
  T* out = stage;
  out[tid * (K + 1)] = x_first;
  out[tid * (K + 1) + K - 1] = x_last;
#pragma unroll
  for (int q = 1; q < K - 1; ++q) out[tid * (K + 1) + q] = (r[q] - a[q] * x_first - c[q] * x_last) / b[q];
  __syncthreads();
  for (int e = tid; e < n; e += nt) d[base + e] = out[(e / K) * (K + 1) + e % K];
}

template <class T, int K>
void launch(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  const int n = op.n[0];
  const int threads = std::max(32, ((n + K - 1) / K + 31) / 32 * 32);
  const std::size_t bytes = static_cast<std::size_t>(std::max(threads * (K + 1), 8 * threads)) * sizeof(T);
  const unsigned lines = static_cast<unsigned>(static_cast<std::size_t>(op.n[1]) * op.n[2]);
  if (op.alpha_field)
    register_cr_kernel<T, K, false><<<lines, threads, bytes, s>>>(op, tau, d);
  else
    register_cr_kernel<T, K, true><<<lines, threads, bytes, s>>>(op, tau, d);
  ADI3D_CUDA_LAUNCH_CHECK();
}

}  // namespace

template <class T>
bool launch_register_cr_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  const int n = op.n[0];
  if (op.lo[0] == BoundaryKind::periodic || n > 16 * kMaxThreads) return false;
  if (op.n[1] <= 0 || op.n[2] <= 0) return true;
  // The smallest K that keeps a line within one block of kMaxThreads threads.
  if (n <= 4 * kMaxThreads)
    launch<T, 4>(op, tau, d, s);
  else if (n <= 8 * kMaxThreads)
    launch<T, 8>(op, tau, d, s);
  else
    launch<T, 16>(op, tau, d, s);
  return true;
}

template bool launch_register_cr_x<float>(const OperatorView<float>&, float, float*, cudaStream_t);
template bool launch_register_cr_x<double>(const OperatorView<double>&, double, double*, cudaStream_t);

}  // namespace adi3d::cuda
