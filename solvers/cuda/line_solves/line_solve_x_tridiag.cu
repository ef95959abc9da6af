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
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/fast_divide.cuh"
#include "solvers/discretization.hpp"
#include "solvers/material_index.hpp"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_reg_kernels.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace adi3d::cuda {
namespace {

namespace td = tridiag::detail;
using td::Access;

// Row u of a line of L rows in registers, as td::load_rows prepares rows read from arrays:
// identity (d = 0) past the line's end or on idle threads, else make()'s row of
// (I - tau A_x) with the coupling out of the line's ends dropped.
template <class T, class MakeRow>
__device__ __forceinline__ void put_row(long u, long L, bool live, MakeRow make, T& a, T& b, T& c, T& d) {
  if (!live || u >= L) {
    a = T(0);
    b = T(1);
    c = T(0);
    d = T(0);
    return;
  }
  const TriRow<T> row = make();
  a = u == 0 ? T(0) : row.a;
  b = row.b;
  c = u == L - 1 ? T(0) : row.c;
}

// Row u of line g with constant alpha: every interior row is the same row (`interior`,
// formed once per thread by the point rules): this saves the harmonic means' two
// divisions per row.
template <class T>
__device__ __forceinline__ void generated_row(const OperatorView<T>& op, T tau, const TriRow<T>& interior, long g,
                                              long u, long L, bool live, T& a, T& b, T& c, T& d) {
  put_row(u, L, live, [&] {
    return (u > 0 && u < L - 1)
               ? interior
               : implicit_row(axis_row(op, 0, static_cast<int>(u), static_cast<std::size_t>(g * L + u), 1), tau);
  }, a, b, c, d);
}

// Row u of line g with an alpha field: the same rule from the diffusivities at u-1, u and
// u+1 (am, ac, ap), held in registers; past the line's ends the neighbour is clamped to
// the node itself, as axis_row clamps it. Face means by the fast division (float).
template <class T>
__device__ __forceinline__ void generated_row_alpha(const OperatorView<T>& op, T tau, T am, T ac, T ap, long u,
                                                    long L, bool live, T& a, T& b, T& c, T& d) {
  put_row(u, L, live, [&] {
    AxisRow<T> r{};
    r.kind = row_kind(static_cast<int>(u), static_cast<int>(L), op.lo[0], op.hi[0]);
    r.w = row_weights_by([](T a0, T a1) { return harmonic_mean_fast(a0, a1); }, r.kind, u == 0 ? ac : am, ac,
                         u == L - 1 ? ac : ap, op.inv_h2[0]);
    return implicit_row(r, tau);
  }, a, b, c, d);
}

// The thread's K values of a grid-sized array along its line (rows [u0, u0+K)), by the
// block's access pattern; 0 past the line's end.
template <class T, int K, Access ACC>
__device__ __forceinline__ void load_line_chunk(const T* src, long off, long u0, long L, bool live, bool vec,
                                                long wrow0, long wvalid, int lane, T* wbuf, T (&r)[K]) {
  if constexpr (ACC == Access::warp_vec) {
    using V = typename td::VecOf<T>::type;
    V tmp[K / td::kVecWidth<T>];
    td::warp_gload<T, K>(src, wrow0, wvalid, lane, T(0), tmp);
    td::warp_transpose_in<T, K>(tmp, reinterpret_cast<V*>(wbuf), lane, r);
  } else if constexpr (ACC == Access::warp_scalar) {
    T tmp[K];
    td::warp_gload_scalar<T, K>(src, wrow0, wvalid, lane, T(0), tmp);
    td::warp_transpose_in_scalar<T, K>(tmp, wbuf, lane, r);
  } else {
    const long rem = live ? L - u0 : 0;
    const int valid = rem <= 0 ? 0 : (rem >= K ? K : static_cast<int>(rem));
    td::load_chunk<T, K>(src, off, valid, vec, T(0), r);
  }
}

// td::k_reg_base's rows generated from the operator: d comes from memory, and alpha when
// it is a field, read by the same coalesced access as d (not three scattered loads per
// row), plus the two values beyond the chunk.
template <class T, bool kConstAlpha>
struct GeneratedRows {
  OperatorView<T> op;
  T tau;
  const T* d;

  // The pivots of an alpha field's rows by the fast reciprocal: the chain of dependent
  // divisions bounds that solve, as the warp solves' (fast_divide.cuh).
  struct FastReciprocal {
    __device__ __forceinline__ T operator()(T x) const { return reciprocal(x); }
  };
  using Reciprocal = std::conditional_t<kConstAlpha, td::IeeeReciprocal<T>, FastReciprocal>;

  template <int K, Access ACC>
  __device__ __forceinline__ void load(long g, long off, long u0, long L, bool live, bool vec, long wrow0,
                                       long wvalid, int lane, T* wbuf, td::Chunk<T, K>& ch) const {
    load_line_chunk<T, K, ACC>(d, off, u0, L, live, vec, wrow0, wvalid, lane, wbuf, ch.d);
    if constexpr (kConstAlpha) {
      OperatorView<T> o = op;
      o.alpha_field = nullptr;
      // Row 1 is interior whenever interior rows exist (L >= 3); nothing is read.
      const TriRow<T> interior = implicit_row(axis_row(o, 0, 1, static_cast<std::size_t>(g * L + 1), 1), tau);
#pragma unroll
      for (int i = 0; i < K; ++i)
        generated_row(o, tau, interior, g, u0 + i, L, live, ch.a[i], ch.b[i], ch.c[i], ch.d[i]);
    } else if (op.material) {
      // The chunk's K material bytes by one load (u0 is a multiple of K and the index's
      // rows of a multiple of 32 bytes: aligned, and inside the row), the two beyond it
      // by byte, each clamped to the line's end node as axis_row clamps a neighbour; then
      // the K + 1 face means of the chunk from the table (in L1 after the first warps),
      // face[i] between rows u0 + i - 1 and u0 + i.
      static_assert(K == 8, "one 8-byte load per chunk");
      int mat[K + 2] = {};
      if (live && u0 < L) {
        const std::uint8_t* m = op.material + static_cast<std::size_t>(g) * op.material_pitch + u0;
        const uint2 w = *reinterpret_cast<const uint2*>(m);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          mat[i + 1] = (w.x >> (8 * i)) & 0xff;
          mat[i + 5] = (w.y >> (8 * i)) & 0xff;
        }
        mat[0] = u0 > 0 ? m[-1] : mat[1];
        if (u0 + K < L) mat[K + 1] = m[K];
#pragma unroll
        for (int i = 0; i < K; ++i)
          if (u0 + i == L - 1) mat[i + 2] = mat[i + 1];
      }
      T face[K + 1];
#pragma unroll
      for (int i = 0; i <= K; ++i) face[i] = __ldg(op.material_face_mean + mat[i] * kMaxMaterials + mat[i + 1]);
      // Row i's faces are face[i] and face[i + 1] (the clamps are in mat already), handed to
      // row_weights_by as the values it would mean (a mean that returns its first
      // argument): picking them by a runtime index (generated_row_alpha's clamp of the
      // neighbour at a line's first row, by position) put the faces in local memory.
      auto first = [](T f0, T) { return f0; };
#pragma unroll
      for (int i = 0; i < K; ++i)
        put_row(u0 + i, L, live, [&] {
          AxisRow<T> r{};
          r.kind = row_kind(static_cast<int>(u0 + i), static_cast<int>(L), op.lo[0], op.hi[0]);
          r.w = row_weights_by(first, r.kind, face[i], face[i + 1], face[i + 1], op.inv_h2[0]);
          return implicit_row(r, tau);
        }, ch.a[i], ch.b[i], ch.c[i], ch.d[i]);
    } else {
      const T* alpha = op.alpha_field;
      T al[K];
      load_line_chunk<T, K, ACC>(alpha, off, u0, L, live, vec, wrow0, wvalid, lane, wbuf, al);
      const T before = live && u0 > 0 && u0 < L ? alpha[off - 1] : T(0);
      const T after = live && u0 + K < L ? alpha[off + K] : T(0);
#pragma unroll
      for (int i = 0; i < K; ++i)
        generated_row_alpha(op, tau, i == 0 ? before : al[i - 1], al[i], i == K - 1 ? after : al[i + 1], u0 + i,
                            L, live, ch.a[i], ch.b[i], ch.c[i], ch.d[i]);
    }
  }
};

long pow2_ceil(long x) {
  long p = 1;
  while (p < x) p *= 2;
  return p;
}

template <class T, int K, Access ACC>
void launch_generated(const OperatorView<T>& op, T tau, T* d, long count, int tps, int spb, bool vec,
                      unsigned blocks, unsigned threads, std::size_t smem, cudaStream_t s) {
  auto launch = [&](auto rows) {
    auto kernel = td::k_reg_base<T, K, ACC, decltype(rows)>;
    // Above the default 48 KiB (long lines, double) the kernel must opt in; the attribute is
    // per kernel and device, and setting it again is cheap next to a grid-sized solve.
    if (smem > 48 * 1024)
      ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem)));
    const long L = op.n[0];
    kernel<<<blocks, threads, smem, s>>>(rows, d, count, L, L, tps, spb, vec);
    ADI3D_CUDA_LAUNCH_CHECK();
  };
  if (op.alpha_field)
    launch(GeneratedRows<T, false>{op, tau, d});
  else
    launch(GeneratedRows<T, true>{op, tau, d});
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
  // Vector access reads alpha (when a field) like d.
  const bool vec = reinterpret_cast<std::uintptr_t>(d) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(op.alpha_field) % 16 == 0 && L % W == 0;
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
