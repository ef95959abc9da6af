// Lines along x through the tridiag library (issue 6 item 1: the library is the engine
// under the ADI line solves). The x lines of the grid are a contiguous batch: ny*nz
// systems of nx rows, system s at s*nx.
// Generated rows (non-periodic, nx <= 4096): the library's register partition base kernel
// (tridiag_reg_kernels.cuh: chunk elimination, PCR on the separators, back-substitution)
// with each row computed from the point rules in registers instead of read from a, b, c
// arrays; 2 arrays per point (d in, x out), plus alpha when it is a field.
// Coefficient arrays (periodic lines, longer lines): a, b, c written once from the point
// rules (3 arrays) and cached by the backend, then tridiag::solve_cuda on the batch, which
// handles the cyclic corners by Sherman-Morrison.
#include "solvers/cuda/cuda_backend.cuh"
#include "solvers/cuda/cuda_check.hpp"
#include "solvers/discretization.hpp"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_reg_kernels.cuh"

#include <algorithm>
#include <cstdint>

namespace adi3d::cuda {
namespace {

namespace td = tridiag::detail;
using td::Access;

// Row u of line g in registers: the point rules' row of (I - tau A_x), with the coupling
// out of the line's ends dropped and identity rows (d = 0) past its end or on idle threads,
// exactly as td::load_rows prepares rows read from arrays. With constant alpha every
// interior row is the same row (`interior`, formed once per thread by the same rule): this
// saves the harmonic means' two divisions per row.
template <class T, bool kConstAlpha>
__device__ __forceinline__ void generated_row(const OperatorView<T>& op, T tau, const TriRow<T>& interior, long g,
                                              long u, long L, bool live, T& a, T& b, T& c, T& d) {
  if (!live || u >= L) {
    a = T(0);
    b = T(1);
    c = T(0);
    d = T(0);
    return;
  }
  const TriRow<T> row =
      (kConstAlpha && u > 0 && u < L - 1)
          ? interior
          : implicit_row(axis_row(op, 0, static_cast<int>(u), static_cast<std::size_t>(g * L + u), 1), tau);
  a = u == 0 ? T(0) : row.a;
  b = row.b;
  c = u == L - 1 ? T(0) : row.c;
}

// td::k_reg_base with generated rows: spb lines of L rows per block, tps threads per line
// (tps * K >= L; a power of two up to 32, else a multiple of 32). Warp access needs every
// warp inside one line (tps >= 32) or L == tps * K (the block's lines contiguous).
// Shared memory: 6 values per thread, plus td::warp_buf_words<K>() per warp for warp access.
template <class T, int K, Access ACC, bool kConstAlpha>
__global__ void __launch_bounds__(td::reg_max_threads<T, K>())
    generated_rows_kernel(OperatorView<T> op, T tau, T* d, long count, int tps, int spb, bool vec) {
  extern __shared__ __align__(16) unsigned char x_reg_smem[];
  if (kConstAlpha) op.alpha_field = nullptr;
  T* sh = reinterpret_cast<T*>(x_reg_smem);
  const long L = op.n[0];
  const int tid = threadIdx.x, lane = tid & 31;
  const int w = tid / tps, t = tid - w * tps;
  const long g = static_cast<long>(blockIdx.x) * spb + w;
  const bool live = w < spb && g < count;
  const long u0 = static_cast<long>(t) * K;
  const long off = g * L + u0;
  long wrow0 = 0, wvalid = 0;
  T* wbuf = nullptr;
  if constexpr (ACC != Access::thread) {
    if (tps >= 32) {
      const long w0 = static_cast<long>(t & ~31) * K;
      wrow0 = g * L + w0;
      wvalid = live ? min(32L * K, L - w0) : 0;
    } else {
      const long b0 = static_cast<long>(blockIdx.x) * spb * L;
      wrow0 = b0 + static_cast<long>(tid >> 5) * 32 * K;
      wvalid = min(count * L, b0 + spb * L) - wrow0;
    }
    wbuf = sh + 6 * blockDim.x + (tid >> 5) * td::warp_buf_words<K>();
  }
  td::Chunk<T, K> ch;
  // Only d comes from memory.
  if constexpr (ACC == Access::warp_vec) {
    using V = typename td::VecOf<T>::type;
    V tmp[K / td::kVecWidth<T>];
    td::warp_gload<T, K>(d, wrow0, wvalid, lane, T(0), tmp);
    td::warp_transpose_in<T, K>(tmp, reinterpret_cast<V*>(wbuf), lane, ch.d);
  } else if constexpr (ACC == Access::warp_scalar) {
    T tmp[K];
    td::warp_gload_scalar<T, K>(d, wrow0, wvalid, lane, T(0), tmp);
    td::warp_transpose_in_scalar<T, K>(tmp, wbuf, lane, ch.d);
  } else {
    const long rem = live ? L - u0 : 0;
    const int valid = rem <= 0 ? 0 : (rem >= K ? K : static_cast<int>(rem));
    td::load_chunk<T, K>(d, off, valid, vec, T(0), ch.d);
  }
  // Row 1 is interior whenever interior rows exist (L >= 3); with constant alpha nothing is read.
  const TriRow<T> interior =
      kConstAlpha ? implicit_row(axis_row(op, 0, 1, static_cast<std::size_t>(g * L + 1), 1), tau) : TriRow<T>{};
#pragma unroll
  for (int i = 0; i < K; ++i)
    generated_row<T, kConstAlpha>(op, tau, interior, g, u0 + i, L, live, ch.a[i], ch.b[i], ch.c[i], ch.d[i]);
  // From here on the library's base kernel, step for step.
  td::chunk_forward<T, K>(ch);
  T D0, L0, R0;
  td::chunk_first<T, K>(ch, D0, L0, R0);
  const bool shfl = tps <= 32;
  T* x1 = sh + 3 * blockDim.x;
  const T D0n = td::neighbour(D0, 1, t, tps, shfl, x1);
  const T L0n = td::neighbour(L0, 1, t, tps, shfl, x1 + blockDim.x);
  const T R0n = td::neighbour(R0, 1, t, tps, shfl, x1 + 2 * blockDim.x);
  T A, B, C, D;
  td::chunk_reduced<T, K>(ch, D0n, L0n, R0n, A, B, C, D);
  const T y = td::reduced_pcr(A, B, C, D, t, tps, shfl, sh);
  int steps = 0;
  for (int h = 1; h < tps; h <<= 1) ++steps;
  const T ym = td::neighbour(y, -1, t, tps, shfl, sh + (steps & 1) * 3 * blockDim.x);
  td::chunk_back<T, K>(ch, ym, y);
  td::store_rows<T, K, ACC>(d, off, u0, L, live, vec, wrow0, wvalid, lane, wbuf, ch.d);
}

long pow2_ceil(long x) {
  long p = 1;
  while (p < x) p *= 2;
  return p;
}

template <class T, int K, Access ACC>
void launch_generated(const OperatorView<T>& op, T tau, T* d, long count, int tps, int spb, bool vec,
                      unsigned blocks, unsigned threads, std::size_t smem, cudaStream_t s) {
  auto kernel = op.alpha_field ? generated_rows_kernel<T, K, ACC, false> : generated_rows_kernel<T, K, ACC, true>;
  // Above the default 48 KiB (long lines, double) the kernel must opt in; the attribute is
  // per kernel and device, and setting it again is cheap next to a grid-sized solve.
  if (smem > 48 * 1024)
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  kernel<<<blocks, threads, smem, s>>>(op, tau, d, count, tps, spb, vec);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
__global__ void x_coefficients_kernel(OperatorView<T> op, T tau, T* a, T* b, T* c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= op.n[0]) return;
  const std::size_t p = i + static_cast<std::size_t>(op.n[0]) * (blockIdx.y + static_cast<std::size_t>(op.n[1]) * blockIdx.z);
  // On a periodic axis a[0] and c[n-1] are the wrap-around entries: the library's cyclic
  // corners. Elsewhere the library ignores them.
  const TriRow<T> row = implicit_row(axis_row(op, 0, i, p, 1), tau);
  a[p] = row.a;
  b[p] = row.b;
  c[p] = row.c;
}

// Launch shape as the library's register base (tridiag_cuda.cu, base_reg); false when a
// line needs more than the kernel's threads.
template <class T, int K>
bool launch_generated_k(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  const long L = op.n[0], count = static_cast<long>(op.n[1]) * op.n[2];
  constexpr int maxt = td::reg_max_threads<T, K>();
  constexpr int W = td::kVecWidth<T>;
  const long chunks = (L + K - 1) / K;
  const long tps = chunks <= 32 ? pow2_ceil(chunks) : (chunks + 31) / 32 * 32;
  if (tps > maxt) return false;
  const bool warp = tps >= 32 || L == tps * K;
  const bool vec = reinterpret_cast<std::uintptr_t>(d) % 16 == 0 && L % W == 0;
  long spb = std::max(1L, std::min<long>(LineSolvePolicy::tridiag_block_threads, maxt) / tps);
  spb = std::min(spb, count);
  const long threads = (spb * tps + 31) / 32 * 32;
  const long blocks = (count + spb - 1) / spb;
  const std::size_t smem =
      (6 * static_cast<std::size_t>(threads) + (warp ? threads / 32 * td::warp_buf_words<K>() : 0)) * sizeof(T);
  const unsigned b = static_cast<unsigned>(blocks), th = static_cast<unsigned>(threads);
  if (warp && vec)
    launch_generated<T, K, Access::warp_vec>(op, tau, d, count, int(tps), int(spb), vec, b, th, smem, s);
  else if (warp)
    launch_generated<T, K, Access::warp_scalar>(op, tau, d, count, int(tps), int(spb), vec, b, th, smem, s);
  else
    launch_generated<T, K, Access::thread>(op, tau, d, count, int(tps), int(spb), vec, b, th, smem, s);
  return true;
}

}  // namespace

static_assert(LineSolvePolicy::tridiag_generated_max_rows ==
                  LineSolvePolicy::tridiag_rows_per_thread *
                      td::reg_max_threads<float, LineSolvePolicy::tridiag_rows_per_thread>() &&
              LineSolvePolicy::tridiag_generated_max_rows ==
                  LineSolvePolicy::tridiag_rows_per_thread *
                      td::reg_max_threads<double, LineSolvePolicy::tridiag_rows_per_thread>(),
              "the longest generated-row line: rows per thread x the kernel's threads");

template <class T>
bool launch_tridiag_generated_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s) {
  if (op.lo[0] == BoundaryKind::periodic) return false;
  if (op.n[0] <= 0 || static_cast<long>(op.n[1]) * op.n[2] <= 0) return true;
  return launch_generated_k<T, LineSolvePolicy::tridiag_rows_per_thread>(op, tau, d, s);
}

template <class T>
void launch_x_coefficients(const OperatorView<T>& op, T tau, T* a, T* b, T* c, cudaStream_t s) {
  const dim3 block(128), grid((op.n[0] + 127) / 128, op.n[1], op.n[2]);
  x_coefficients_kernel<<<grid, block, 0, s>>>(op, tau, a, b, c);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
std::size_t tridiag_arrays_workspace(const OperatorView<T>& op) {
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
  // The library's cyclic path takes two grid-sized arrays and one value per system.
  return op.lo[0] == BoundaryKind::periodic ? 2 * points + static_cast<std::size_t>(op.n[1]) * op.n[2] : 0;
}

template <class T>
void launch_tridiag_arrays_x(const OperatorView<T>& op, const T* a, const T* b, const T* c, T* d, cudaStream_t s) {
  const long n = op.n[0], count = static_cast<long>(op.n[1]) * op.n[2];
  if (n <= 0 || count <= 0) return;
  tridiag::TridiagBatch<T> batch;
  batch.a = a;
  batch.b = b;
  batch.c = c;
  batch.d = d;
  batch.n = n;
  batch.count = count;
  batch.layout = tridiag::Layout::contiguous;
  batch.cyclic = op.lo[0] == BoundaryKind::periodic;
  tridiag::solve_cuda(batch, tridiag::policy_for<T>(n, count, tridiag::Layout::contiguous), s);
}

#define ADI3D_INSTANTIATE_TRIDIAG_X(T)                                                               \
  template bool launch_tridiag_generated_x<T>(const OperatorView<T>&, T, T*, cudaStream_t);          \
  template void launch_x_coefficients<T>(const OperatorView<T>&, T, T*, T*, T*, cudaStream_t);       \
  template std::size_t tridiag_arrays_workspace<T>(const OperatorView<T>&);                          \
  template void launch_tridiag_arrays_x<T>(const OperatorView<T>&, const T*, const T*, const T*, T*, \
                                           cudaStream_t);
ADI3D_INSTANTIATE_TRIDIAG_X(float)
ADI3D_INSTANTIATE_TRIDIAG_X(double)
#undef ADI3D_INSTANTIATE_TRIDIAG_X

}  // namespace adi3d::cuda
