#pragma once
// Register-resident partition kernels (BaseKernel::reg_partition, Stage1Method::reg_partition).
// Every thread owns a contiguous chunk of K rows held in registers. Its last row is the
// chunk's separator y_t; rows 0..K-2 are eliminated by a forward sweep in which the previous
// chunk's separator y_{t-1} rides along as an extra unknown, so that
//   x_i = dp_i + lp_i y_{t-1} - cp_i x_{i+1}      (i < K-1, x_{K-1} = y_t),
// and the separator row becomes one row of a tridiagonal system in the separators (one
// unknown per thread, needing the next chunk's x_0 = D0 + L0 y_t + R0 y_{t+1}). That reduced
// system is solved by PCR across the threads of a system (warp shuffles up to 32 threads,
// shared memory beyond) in the base kernel, or written out and solved recursively by the
// multi-stage solver in stage 1; then every thread back-substitutes its chunk in registers.
// Rows past a system's end are identity rows (x = 0) that couple to nothing.
//
// Bytes per equation, float/double: base 20/40 (4 read + 1 written, the floor); stage 1
// reads the 4 arrays twice and writes x once (36/72) plus 4 reduced arrays per K rows.
// Shared memory holds only the reduced rows and, when a warp's rows are contiguous, the
// transpose buffer that turns coalesced vector loads into per-thread chunks.
#include "solvers/tridiag/tridiag_kernels.cuh"

#include <cstdint>
#include <type_traits>

namespace adi3d::tridiag::detail {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = float4;
};
template <>
struct VecOf<double> {
  using type = double2;
};
template <class T>
constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));

// Threads per block at most for a chunk of K rows of T: 128 registers per thread for small
// chunks, 255 for the largest (16 doubles).
template <class T, int K>
__host__ __device__ constexpr int reg_max_threads() {
  return K * sizeof(T) > 64 ? 256 : 512;
}

__device__ __forceinline__ void vput(float* r, const float4& v) {
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}
__device__ __forceinline__ void vput(double* r, const double2& v) {
  r[0] = v.x;
  r[1] = v.y;
}
__device__ __forceinline__ float4 vget(const float* r) { return make_float4(r[0], r[1], r[2], r[3]); }
__device__ __forceinline__ double2 vget(const double* r) { return make_double2(r[0], r[1]); }

// Swizzled 16-byte slot of a warp's transpose buffer: conflict-free for the coalesced pass
// (slot j*32+lane) and the per-thread pass (slot lane*Q+q) for Q = 1, 2, 4, 8.
__device__ __forceinline__ int swz(int v) { return v ^ ((v >> 3) & 7); }

// Per-thread load of rows [off, off+K) of p, of which the first `valid` exist (the rest get
// fill). vec: 16-byte vector loads (off and p aligned).
template <class T, int K>
__device__ __forceinline__ void load_chunk(const T* __restrict__ p, long off, int valid, bool vec, T fill,
                                           T (&r)[K]) {
  constexpr int W = kVecWidth<T>;
  using V = typename VecOf<T>::type;
  if (p == nullptr) {
#pragma unroll
    for (int i = 0; i < K; ++i) r[i] = fill;
  } else if (vec && valid == K) {
    const V* q = reinterpret_cast<const V*>(p + off);
#pragma unroll
    for (int j = 0; j < K / W; ++j) vput(&r[j * W], q[j]);
  } else {
#pragma unroll
    for (int i = 0; i < K; ++i) r[i] = i < valid ? p[off + i] : fill;
  }
}

template <class T, int K>
__device__ __forceinline__ void store_chunk(T* __restrict__ p, long off, int valid, bool vec, const T (&r)[K]) {
  constexpr int W = kVecWidth<T>;
  using V = typename VecOf<T>::type;
  if (vec && valid == K) {
    V* q = reinterpret_cast<V*>(p + off);
#pragma unroll
    for (int j = 0; j < K / W; ++j) q[j] = vget(&r[j * W]);
  } else {
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (i < valid) p[off + i] = r[i];
  }
}

// Warp-cooperative load, step 1: the warp's 32K contiguous rows from wrow0 (16-byte aligned),
// coalesced, of which the first wvalid exist.
template <class T, int K>
__device__ __forceinline__ void warp_gload(const T* __restrict__ p, long wrow0, long wvalid, int lane, T fill,
                                           typename VecOf<T>::type (&tmp)[K / kVecWidth<T>]) {
  constexpr int W = kVecWidth<T>, Q = K / W;
#pragma unroll
  for (int j = 0; j < Q; ++j) {
    const int v = j * 32 + lane;
    const long e = static_cast<long>(v) * W;
    if (p != nullptr && e + W <= wvalid) {
      tmp[j] = reinterpret_cast<const typename VecOf<T>::type*>(p + wrow0)[v];
    } else {
      T r[W];
#pragma unroll
      for (int k = 0; k < W; ++k) r[k] = (p != nullptr && e + k < wvalid) ? p[wrow0 + e + k] : fill;
      tmp[j] = vget(r);
    }
  }
}

// Step 2: through the warp's shared buffer, lane l gets rows [l*K, l*K+K) of the warp's rows.
template <class T, int K>
__device__ __forceinline__ void warp_transpose_in(const typename VecOf<T>::type (&tmp)[K / kVecWidth<T>],
                                                  typename VecOf<T>::type* buf, int lane, T (&r)[K]) {
  constexpr int W = kVecWidth<T>, Q = K / W;
#pragma unroll
  for (int j = 0; j < Q; ++j) buf[swz(j * 32 + lane)] = tmp[j];
  __syncwarp();
#pragma unroll
  for (int q = 0; q < Q; ++q) vput(&r[q * W], buf[swz(lane * Q + q)]);
  __syncwarp();
}

// The reverse: per-lane chunks back to the warp's contiguous rows, coalesced stores.
template <class T, int K>
__device__ __forceinline__ void warp_store(T* __restrict__ p, long wrow0, long wvalid, int lane, const T (&r)[K],
                                           typename VecOf<T>::type* buf) {
  constexpr int W = kVecWidth<T>, Q = K / W;
  using V = typename VecOf<T>::type;
#pragma unroll
  for (int q = 0; q < Q; ++q) buf[swz(lane * Q + q)] = vget(&r[q * W]);
  __syncwarp();
#pragma unroll
  for (int j = 0; j < Q; ++j) {
    const int v = j * 32 + lane;
    const long e = static_cast<long>(v) * W;
    const V val = buf[swz(v)];
    if (e + W <= wvalid) {
      reinterpret_cast<V*>(p + wrow0)[v] = val;
    } else {
      T rr[W];
      vput(rr, val);
#pragma unroll
      for (int k = 0; k < W; ++k)
        if (e + k < wvalid) p[wrow0 + e + k] = rr[k];
    }
  }
  __syncwarp();
}

// The same through a padded scalar buffer (any alignment): slot e + e/32 keeps both the
// coalesced pass (e = j*32+lane) and the per-thread pass (e = lane*K+i) conflict-free.
__device__ __forceinline__ int spad(int e) { return e + (e >> 5); }

template <class T, int K>
__device__ __forceinline__ void warp_gload_scalar(const T* __restrict__ p, long wrow0, long wvalid, int lane,
                                                  T fill, T (&tmp)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const long e = j * 32 + lane;
    tmp[j] = (p != nullptr && e < wvalid) ? p[wrow0 + e] : fill;
  }
}

template <class T, int K>
__device__ __forceinline__ void warp_transpose_in_scalar(const T (&tmp)[K], T* buf, int lane, T (&r)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) buf[spad(j * 32 + lane)] = tmp[j];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < K; ++i) r[i] = buf[spad(lane * K + i)];
  __syncwarp();
}

template <class T, int K>
__device__ __forceinline__ void warp_store_scalar(T* __restrict__ p, long wrow0, long wvalid, int lane,
                                                  const T (&r)[K], T* buf) {
#pragma unroll
  for (int i = 0; i < K; ++i) buf[spad(lane * K + i)] = r[i];
  __syncwarp();
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const long e = j * 32 + lane;
    if (e < wvalid) p[wrow0 + e] = buf[spad(j * 32 + lane)];
  }
  __syncwarp();
}

// How a kernel moves the threads' chunks between global memory and registers. thread:
// per-thread loads and stores (16-byte vectors when aligned). warp_vec, warp_scalar: the 32
// chunks of a warp are the contiguous rows [wrow0, wrow0 + 32K), of which the first wvalid
// exist, moved coalesced (16-byte vectors from 16-byte aligned rows, or scalars) and
// transposed through the warp's shared buffer of warp_buf_words<K>() values.
enum class Access { thread, warp_vec, warp_scalar };

template <int K>
__host__ __device__ constexpr int warp_buf_words() {
  return 33 * K;
}

// A chunk's rows in registers.
template <class T, int K>
struct Chunk {
  T a[K], b[K], c[K], d[K];
};

// Loads the chunk of rows [u0, u0+K) of a system of L rows at global offset off (thread
// access) or the warp's rows (warp access, wbuf the warp's buffer), then makes rows outside
// the system identity rows and drops the coupling out of its first and last row.
template <class T, int K, Access ACC>
__device__ __forceinline__ void load_rows(const Coeffs<T>& s, long off, long u0, long L, bool vec, long wrow0,
                                          long wvalid, int lane, T* wbuf, Chunk<T, K>& ch) {
  if constexpr (ACC == Access::warp_vec) {
    constexpr int Q = K / kVecWidth<T>;
    using V = typename VecOf<T>::type;
    V* buf = reinterpret_cast<V*>(wbuf);
    V ta[Q], tb[Q], tc[Q], td[Q];
    warp_gload<T, K>(s.a, wrow0, wvalid, lane, T(0), ta);
    warp_gload<T, K>(s.b, wrow0, wvalid, lane, T(1), tb);
    warp_gload<T, K>(s.c, wrow0, wvalid, lane, T(0), tc);
    warp_gload<T, K>(s.d, wrow0, wvalid, lane, T(0), td);
    warp_transpose_in<T, K>(ta, buf, lane, ch.a);
    warp_transpose_in<T, K>(tb, buf, lane, ch.b);
    warp_transpose_in<T, K>(tc, buf, lane, ch.c);
    warp_transpose_in<T, K>(td, buf, lane, ch.d);
  } else if constexpr (ACC == Access::warp_scalar) {
    T ta[K], tb[K], tc[K], td[K];
    warp_gload_scalar<T, K>(s.a, wrow0, wvalid, lane, T(0), ta);
    warp_gload_scalar<T, K>(s.b, wrow0, wvalid, lane, T(1), tb);
    warp_gload_scalar<T, K>(s.c, wrow0, wvalid, lane, T(0), tc);
    warp_gload_scalar<T, K>(s.d, wrow0, wvalid, lane, T(0), td);
    warp_transpose_in_scalar<T, K>(ta, wbuf, lane, ch.a);
    warp_transpose_in_scalar<T, K>(tb, wbuf, lane, ch.b);
    warp_transpose_in_scalar<T, K>(tc, wbuf, lane, ch.c);
    warp_transpose_in_scalar<T, K>(td, wbuf, lane, ch.d);
  } else {
    const long rem = L - u0;
    const int valid = rem <= 0 ? 0 : (rem >= K ? K : static_cast<int>(rem));
    load_chunk<T, K>(s.a, off, valid, vec, T(0), ch.a);
    load_chunk<T, K>(s.b, off, valid, vec, T(1), ch.b);
    load_chunk<T, K>(s.c, off, valid, vec, T(0), ch.c);
    load_chunk<T, K>(s.d, off, valid, vec, T(0), ch.d);
  }
#pragma unroll
  for (int i = 0; i < K; ++i) {
    const long u = u0 + i;
    if (u == 0) ch.a[i] = T(0);
    if (u >= L - 1) ch.c[i] = T(0);
    if (u >= L) {
      ch.a[i] = T(0);
      ch.b[i] = T(1);
      ch.d[i] = T(0);
    }
  }
}

// Stores the solved chunk (rows [u0, u0+K) of a system of L rows at off; thread access
// stores only when live), or the warp's rows.
template <class T, int K, Access ACC>
__device__ __forceinline__ void store_rows(T* x, long off, long u0, long L, bool live, bool vec, long wrow0,
                                           long wvalid, int lane, T* wbuf, const T (&r)[K]) {
  if constexpr (ACC == Access::warp_vec) {
    warp_store<T, K>(x, wrow0, wvalid, lane, r, reinterpret_cast<typename VecOf<T>::type*>(wbuf));
  } else if constexpr (ACC == Access::warp_scalar) {
    warp_store_scalar<T, K>(x, wrow0, wvalid, lane, r, wbuf);
  } else if (live) {
    const long rem = L - u0;
    if (rem > 0) store_chunk<T, K>(x, off, rem >= K ? K : static_cast<int>(rem), vec, r);
  }
}

// 1/x by IEEE division: the library's own. A caller whose rows are of its own making may
// give k_reg_base another as Rows::Reciprocal (ArrayRows names none).
template <class T>
struct IeeeReciprocal {
  __device__ __forceinline__ T operator()(T x) const { return T(1) / x; }
};
template <class Rows, class T, class = void>
struct ReciprocalOf {
  using type = IeeeReciprocal<T>;
};
template <class Rows, class T>
struct ReciprocalOf<Rows, T, std::void_t<typename Rows::Reciprocal>> {
  using type = typename Rows::Reciprocal;
};

// Forward sweep over rows 0..K-2 (see the top of the file): afterwards a[i] = lp_i,
// c[i] = cp_i, d[i] = dp_i for i < K-1; row K-1 (the separator) is untouched.
template <class T, int K, class Recip = IeeeReciprocal<T>>
__device__ __forceinline__ void chunk_forward(Chunk<T, K>& ch, Recip recip = {}) {
  T inv = recip(ch.b[0]);
  ch.c[0] *= inv;
  ch.d[0] *= inv;
  ch.a[0] = -ch.a[0] * inv;
#pragma unroll
  for (int i = 1; i < K - 1; ++i) {
    const T ai = ch.a[i];
    inv = recip(ch.b[i] - ai * ch.c[i - 1]);
    ch.c[i] *= inv;
    ch.d[i] = (ch.d[i] - ai * ch.d[i - 1]) * inv;
    ch.a[i] = -ai * ch.a[i - 1] * inv;
  }
}

// x_0 = D0 + L0 y_{t-1} + R0 y_t, after chunk_forward.
template <class T, int K>
__device__ __forceinline__ void chunk_first(const Chunk<T, K>& ch, T& D0, T& L0, T& R0) {
  T D = ch.d[K - 2], Lc = ch.a[K - 2], R = -ch.c[K - 2];
#pragma unroll
  for (int i = K - 3; i >= 0; --i) {
    D = ch.d[i] - ch.c[i] * D;
    Lc = ch.a[i] - ch.c[i] * Lc;
    R = -ch.c[i] * R;
  }
  D0 = D;
  L0 = Lc;
  R0 = R;
}

// The separator row A y_{t-1} + B y_t + C y_{t+1} = D, given the next chunk's x_0 terms.
template <class T, int K>
__device__ __forceinline__ void chunk_reduced(const Chunk<T, K>& ch, T D0n, T L0n, T R0n, T& A, T& B, T& C, T& D) {
  const T as = ch.a[K - 1], cs = ch.c[K - 1];
  A = as * ch.a[K - 2];
  B = ch.b[K - 1] - as * ch.c[K - 2] + cs * L0n;
  C = cs * R0n;
  D = ch.d[K - 1] - as * ch.d[K - 2] - cs * D0n;
}

// Back-substitution with both separators known; the solution lands in d.
template <class T, int K>
__device__ __forceinline__ void chunk_back(Chunk<T, K>& ch, T ym, T y) {
  ch.d[K - 1] = y;
  T xn = y;
#pragma unroll
  for (int i = K - 2; i >= 0; --i) {
    xn = ch.d[i] + ch.a[i] * ym - ch.c[i] * xn;
    ch.d[i] = xn;
  }
}

// PCR on the reduced system: thread t (0 <= t < tps, tps a power of two) holds row t. shfl:
// tps <= 32 and every system is an aligned lane segment; otherwise through sh (6 values per
// block thread, two buffers; every thread of the block must call). Returns y_t.
template <class T, class Recip = IeeeReciprocal<T>>
__device__ __forceinline__ T reduced_pcr(T A, T B, T C, T D, int t, int tps, bool shfl, T* sh, Recip recip = {}) {
  const T inv = recip(B);
  T a = A * inv, c = C * inv, d = D * inv;
  const int tid = threadIdx.x, nb = blockDim.x;
  int buf = 0;
  for (int h = 1; h < tps; h <<= 1) {
    T am, cm, dm, ap, cp, dp;
    const bool hm = t >= h, hp = t + h < tps;
    if (shfl) {
      am = __shfl_up_sync(0xffffffffu, a, h);
      cm = __shfl_up_sync(0xffffffffu, c, h);
      dm = __shfl_up_sync(0xffffffffu, d, h);
      ap = __shfl_down_sync(0xffffffffu, a, h);
      cp = __shfl_down_sync(0xffffffffu, c, h);
      dp = __shfl_down_sync(0xffffffffu, d, h);
    } else {
      T* s = sh + buf * 3 * nb;
      s[tid] = a;
      s[nb + tid] = c;
      s[2 * nb + tid] = d;
      __syncthreads();
      am = hm ? s[tid - h] : T(0);
      cm = hm ? s[nb + tid - h] : T(0);
      dm = hm ? s[2 * nb + tid - h] : T(0);
      ap = hp ? s[tid + h] : T(0);
      cp = hp ? s[nb + tid + h] : T(0);
      dp = hp ? s[2 * nb + tid + h] : T(0);
      buf ^= 1;
    }
    if (!hm) am = cm = dm = T(0);
    if (!hp) ap = cp = dp = T(0);
    const T ri = recip(T(1) - a * cm - c * ap);
    const T na = -a * am * ri, nc = -c * cp * ri;
    d = (d - a * dm - c * dp) * ri;
    a = na;
    c = nc;
  }
  return d;
}

// Value of thread tid+1 (dir = +1) or tid-1 (dir = -1) within the system, 0 at its ends.
// Smem path: every thread of the block must call; slot is 1 value per block thread and
// must not be read by a call still in progress (callers alternate regions).
template <class T>
__device__ __forceinline__ T neighbour(T v, int dir, int t, int tps, bool shfl, T* slot) {
  const bool has = dir > 0 ? t + 1 < tps : t > 0;
  T r;
  if (shfl) {
    r = dir > 0 ? __shfl_down_sync(0xffffffffu, v, 1) : __shfl_up_sync(0xffffffffu, v, 1);
  } else {
    slot[threadIdx.x] = v;
    __syncthreads();
    r = has ? slot[threadIdx.x + dir] : T(0);
  }
  return has ? r : T(0);
}

// k_reg_base's rows read from arrays (divided by IEEE division: no Reciprocal member).
template <class T>
struct ArrayRows {
  Coeffs<T> s;
  template <int K, Access ACC>
  __device__ __forceinline__ void load(long /*g*/, long off, long u0, long L, bool live, bool vec, long wrow0,
                                       long wvalid, int lane, T* wbuf, Chunk<T, K>& ch) const {
    load_rows<T, K, ACC>(s, off, live ? u0 : L, L, vec, wrow0, wvalid, lane, wbuf, ch);
  }
};

// Base kernel: spb systems of L rows per block, system g at g*P, tps threads per system
// (tps * K >= L; a power of two up to 32, else a multiple of 32). Warp access needs every
// warp inside one system (tps >= 32) or the block's systems contiguous (L == P == tps*K).
// Shared memory: 6 values per thread, plus warp_buf_words<K>() per warp for warp access.
// Rows gives each thread its chunk: rows.load<K, ACC>(g, off, u0, L, live, vec, wrow0,
// wvalid, lane, wbuf, ch), rows as load_rows makes them (identity rows on idle threads);
// ArrayRows reads a, b, c, d, the ADI x solve generates a, b, c from the operator (and
// may name the division of its rows' pivots: Rows::Reciprocal, a functor T -> 1/T).
template <class T, int K, Access ACC, class Rows>
__global__ void __launch_bounds__(reg_max_threads<T, K>())
    k_reg_base(Rows rows, T* x, long count, long P, long L, int tps, int spb, bool vec) {
  extern __shared__ __align__(16) unsigned char reg_smem[];
  T* sh = reinterpret_cast<T*>(reg_smem);
  const int tid = threadIdx.x, lane = tid & 31;
  const int w = tid / tps, t = tid - w * tps;
  const long g = static_cast<long>(blockIdx.x) * spb + w;
  const bool live = w < spb && g < count;
  const long u0 = static_cast<long>(t) * K;
  const long off = g * P + u0;
  long wrow0 = 0, wvalid = 0;
  T* wbuf = nullptr;
  if constexpr (ACC != Access::thread) {
    if (tps >= 32) {
      const long w0 = static_cast<long>(t & ~31) * K;
      wrow0 = g * P + w0;
      wvalid = live ? min(32L * K, L - w0) : 0;
    } else {
      const long b0 = static_cast<long>(blockIdx.x) * spb * P;
      wrow0 = b0 + static_cast<long>(tid >> 5) * 32 * K;
      wvalid = min(count * P, b0 + spb * P) - wrow0;
    }
    wbuf = sh + 6 * blockDim.x + (tid >> 5) * warp_buf_words<K>();
  }
  Chunk<T, K> ch;
  rows.template load<K, ACC>(g, off, u0, L, live, vec, wrow0, wvalid, lane, wbuf, ch);
  using Recip = typename ReciprocalOf<Rows, T>::type;
  chunk_forward<T, K>(ch, Recip{});
  T D0, L0, R0;
  chunk_first<T, K>(ch, D0, L0, R0);
  const bool shfl = tps <= 32;
  // The next chunk's x_0 terms (three exchanges through the second PCR buffer's regions).
  T* x1 = sh + 3 * blockDim.x;
  const T D0n = neighbour(D0, 1, t, tps, shfl, x1);
  const T L0n = neighbour(L0, 1, t, tps, shfl, x1 + blockDim.x);
  const T R0n = neighbour(R0, 1, t, tps, shfl, x1 + 2 * blockDim.x);
  T A, B, C, D;
  chunk_reduced<T, K>(ch, D0n, L0n, R0n, A, B, C, D);
  const T y = reduced_pcr(A, B, C, D, t, tps, shfl, sh, Recip{});
  // reduced_pcr's last step read one buffer; the other is free (see reduced_pcr). Its
  // index: the steps alternate buffers 0, 1, ...
  int steps = 0;
  for (int h = 1; h < tps; h <<= 1) ++steps;
  const T ym = neighbour(y, -1, t, tps, shfl, sh + (steps & 1) * 3 * blockDim.x);
  chunk_back<T, K>(ch, ym, y);
  store_rows<T, K, ACC>(x, off, u0, L, live, vec, wrow0, wvalid, lane, wbuf, ch.d);
}

// Stage 1, pass 1: parents contiguous systems of n rows, Pc = ceil(n/K) chunks each, one
// thread per chunk (flat index G = p*Pc + t); writes the separator rows as the reduced
// system (parents x Pc, contiguous). Warp access needs n % K == 0 or a single parent (the
// chunks of a warp are then contiguous rows). The last thread of a block recomputes the
// next block's first chunk for its x_0 terms. Shared memory: 3 values per thread, plus
// warp_buf_words<K>() per warp for warp access.
template <class T, int K, Access ACC>
__global__ void __launch_bounds__(reg_max_threads<T, K>())
    k_reg_reduce(Coeffs<T> s, T* ra, T* rb, T* rc, T* rd, long parents, long n, long Pc, bool vec) {
  extern __shared__ __align__(16) unsigned char reg_smem[];
  T* sh = reinterpret_cast<T*>(reg_smem);
  const int tid = threadIdx.x, lane = tid & 31;
  const long nch = parents * Pc;
  const long G = static_cast<long>(blockIdx.x) * blockDim.x + tid;
  const bool live = G < nch;
  const long p = live ? G / Pc : 0, t = live ? G - p * Pc : 0;
  long wrow0 = 0, wvalid = 0;
  T* wbuf = nullptr;
  if constexpr (ACC != Access::thread) {
    wrow0 = (G - lane) * K;
    wvalid = parents * n - wrow0;
    wbuf = sh + 3 * blockDim.x + (tid >> 5) * warp_buf_words<K>();
  }
  Chunk<T, K> ch;
  load_rows<T, K, ACC>(s, p * n + t * K, live ? t * K : n, n, vec, wrow0, wvalid, lane, wbuf, ch);
  chunk_forward<T, K>(ch);
  T D0, L0, R0;
  chunk_first<T, K>(ch, D0, L0, R0);
  sh[tid] = D0;
  sh[blockDim.x + tid] = L0;
  sh[2 * blockDim.x + tid] = R0;
  __syncthreads();
  if (!live) return;
  T D0n = T(0), L0n = T(0), R0n = T(0);
  if (t + 1 < Pc) {
    if (tid + 1 < static_cast<int>(blockDim.x)) {
      D0n = sh[tid + 1];
      L0n = sh[blockDim.x + tid + 1];
      R0n = sh[2 * blockDim.x + tid + 1];
    } else {
      Chunk<T, K> nx;
      load_rows<T, K, Access::thread>(s, p * n + (t + 1) * K, (t + 1) * K, n, vec, 0, 0, lane, nullptr, nx);
      chunk_forward<T, K>(nx);
      chunk_first<T, K>(nx, D0n, L0n, R0n);
    }
  }
  T A, B, C, D;
  chunk_reduced<T, K>(ch, D0n, L0n, R0n, A, B, C, D);
  ra[G] = A;
  rb[G] = B;
  rc[G] = C;
  rd[G] = D;
}

// Stage 1, pass 3: with the separators y (parents x Pc) solved, every thread re-reads its
// chunk, redoes the forward sweep and back-substitutes into x. Blocks run in reverse order
// so that the rows pass 1 read last are still in L2. Shared memory: warp_buf_words<K>()
// per warp for warp access.
template <class T, int K, Access ACC>
__global__ void __launch_bounds__(reg_max_threads<T, K>())
    k_reg_substitute(Coeffs<T> s, const T* y, T* x, long parents, long n, long Pc, bool vec) {
  extern __shared__ __align__(16) unsigned char reg_smem[];
  T* sh = reinterpret_cast<T*>(reg_smem);
  const int tid = threadIdx.x, lane = tid & 31;
  const long nch = parents * Pc;
  const long G = static_cast<long>(gridDim.x - 1 - blockIdx.x) * blockDim.x + tid;
  const bool live = G < nch;
  const long p = live ? G / Pc : 0, t = live ? G - p * Pc : 0;
  long wrow0 = 0, wvalid = 0;
  T* wbuf = nullptr;
  if constexpr (ACC != Access::thread) {
    wrow0 = (G - lane) * K;
    wvalid = parents * n - wrow0;
    wbuf = sh + (tid >> 5) * warp_buf_words<K>();
  }
  Chunk<T, K> ch;
  load_rows<T, K, ACC>(s, p * n + t * K, live ? t * K : n, n, vec, wrow0, wvalid, lane, wbuf, ch);
  chunk_forward<T, K>(ch);
  const T yt = live ? y[G] : T(0);
  const T ym = (live && t > 0) ? y[G - 1] : T(0);
  chunk_back<T, K>(ch, ym, yt);
  store_rows<T, K, ACC>(x, p * n + t * K, t * K, n, live, vec, wrow0, wvalid, lane, wbuf, ch.d);
}

}  // namespace adi3d::tridiag::detail
