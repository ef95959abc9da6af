#pragma once
// Kernels of the multi-stage batched tridiagonal solver (Davidson, Zhang & Owens, IPDPS
// 2011): PCR splitting steps (stage 1 grid-wide, stage 2 per block), partition splitting
// (stage 1 alternative), the PCR-Thomas shared-memory base kernel and the coalesced
// one-thread-per-system Thomas. Bytes per equation, float/double: base kernels 20/40
// (4 read + 1 written); a PCR split step 28/56 (4 read + 3 normalised written); partition
// split about 44/88 over its two passes.
#include "solvers/cuda/backend/cuda_check.hpp"

#include <cuda_runtime.h>

namespace adi3d::tridiag::detail {

// Where the equations of a batch of (sub)systems live. A parent system p has L0 rows, row
// u at p*P + u*J. PCR splitting leaves K interleaved subsystems per parent: subsystem
// g = p*K + j holds rows u = j, j+K, j+2K, ... Contiguous batches are {P=n, J=1, K=1},
// interleaved ones {P=1, J=count, K=1}; each PCR halving doubles K.
struct View {
  long parents;
  long P;
  long J;
  long K;
  long L0;
  __host__ __device__ long num() const { return parents * K; }
  __host__ __device__ long len(long j) const { return (L0 - j + K - 1) / K; }
  __host__ __device__ long mem(long p, long j, long t) const { return p * P + (j + t * K) * J; }
  __host__ __device__ long max_len() const { return len(0); }
};

__host__ __device__ inline void split_index(long idx, long parents, long L0, long J, long& p, long& u) {
  if (J == 1) {  // contiguous parents: consecutive threads walk one parent's rows
    p = idx / L0;
    u = idx - p * L0;
  } else {  // interleaved parents: consecutive threads walk parents
    u = idx / parents;
    p = idx - u * parents;
  }
}

// Coefficient arrays; b == nullptr means rows normalised to a unit diagonal (what every
// splitting stage writes: one array less to store and to read back).
template <class T>
struct Coeffs {
  const T* a;
  const T* b;
  const T* c;
  const T* d;
};

template <class T>
struct OutCoeffs {
  T* a;
  T* c;
  T* d;
};

template <class T>
__device__ __forceinline__ T load_b(const Coeffs<T>& s, long m) {
  return s.b ? s.b[m] : T(1);
}

// One PCR step (Hockney; paper §III-B) on row u of a parent, neighbours u-h and u+h (all
// in memory offsets: mm, m0, mp), written normalised. Missing neighbours act as identity
// rows; their coefficients are never read, so garbage corner entries cannot leak in.
template <class T>
__device__ __forceinline__ void pcr_row(const Coeffs<T>& s, long mm, long m0, long mp, bool has_m,
                                        bool has_p, T& ao, T& co, T& dout) {
  const T a0 = has_m ? s.a[m0] : T(0);
  const T c0 = has_p ? s.c[m0] : T(0);
  T b = load_b(s, m0), d = s.d[m0], a = T(0), c = T(0);
  if (has_m) {
    const T k1 = -a0 / load_b(s, mm);
    b += k1 * s.c[mm];
    d += k1 * s.d[mm];
    a = k1 * s.a[mm];
  }
  if (has_p) {
    const T k2 = -c0 / load_b(s, mp);
    b += k2 * s.a[mp];
    d += k2 * s.d[mp];
    c = k2 * s.c[mp];
  }
  const T inv = T(1) / b;
  ao = a * inv;
  co = c * inv;
  dout = d * inv;
}

// Stage 1, PCR method: one grid-wide halving of every subsystem of v (one launch per step is
// the grid-wide synchronisation the paper pays per split). Output view has K doubled.
template <class T>
__global__ void k_pcr_step_global(Coeffs<T> s, OutCoeffs<T> o, View v) {
  const long total = v.parents * v.L0;
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long>(gridDim.x) * blockDim.x) {
    long p, u;
    split_index(idx, v.parents, v.L0, v.J, p, u);
    const long m0 = p * v.P + u * v.J, step = v.K * v.J;
    T a, c, d;
    pcr_row(s, m0 - step, m0, m0 + step, u - v.K >= 0, u + v.K < v.L0, a, c, d);
    o.a[m0] = a;
    o.c[m0] = c;
    o.d[m0] = d;
  }
}

// Stage 2: one block per subsystem halves it `steps` times, ping-ponging between two
// global (L2-resident) buffers with block barriers instead of launches (paper §III-B).
// Returns through the buffers: after the last step the data sits in buffer steps % 2.
template <class T>
__global__ void k_pcr_split_block(Coeffs<T> src, OutCoeffs<T> buf0, OutCoeffs<T> buf1, View v,
                                  int steps) {
  const long g = blockIdx.x;
  const long p = g / v.K, j = g - p * v.K, L = v.len(j);
  Coeffs<T> in = src;
  for (int st = 0; st < steps; ++st) {
    const OutCoeffs<T> out = (st % 2 == 0) ? buf0 : buf1;
    const long h = 1L << st;
    for (long t = threadIdx.x; t < L; t += blockDim.x) {
      const long m0 = v.mem(p, j, t), step = h * v.K * v.J;
      T a, c, d;
      pcr_row(in, m0 - step, m0, m0 + step, t - h >= 0, t + h < L, a, c, d);
      out.a[m0] = a;
      out.c[m0] = c;
      out.d[m0] = d;
    }
    __syncthreads();  // global writes of this step visible to the whole block
    in = Coeffs<T>{out.a, nullptr, out.c, out.d};
  }
}

// Base kernel, coalesced variant: one thread per subsystem, Thomas straight from global
// memory (Sakharnykh's mapping). Coalesced when consecutive subsystems are adjacent in
// memory: interleaved batches, or contiguous ones after stage-2 PCR splitting.
template <class T>
__global__ void k_thread_thomas(Coeffs<T> s, T* x, T* cp, View v) {
  const long g = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (g >= v.num()) return;
  const long p = g / v.K, j = g - p * v.K, L = v.len(j);
  if (L <= 0) return;
  long m = v.mem(p, j, 0);
  const long step = v.K * v.J;
  T inv = T(1) / load_b(s, m);
  T cprev = (L > 1 ? s.c[m] : T(0)) * inv;
  T dprev = s.d[m] * inv;
  cp[m] = cprev;
  x[m] = dprev;
  for (long t = 1; t < L; ++t) {
    m += step;
    const T a = s.a[m];
    const T c = (t + 1 < L) ? s.c[m] : T(0);
    inv = T(1) / (load_b(s, m) - a * cprev);
    cprev = c * inv;
    dprev = (s.d[m] - a * dprev) * inv;
    cp[m] = cprev;
    x[m] = dprev;
  }
  T xn = dprev;
  for (long t = L - 2; t >= 0; --t) {
    m -= step;
    xn = x[m] - cp[m] * xn;
    x[m] = xn;
  }
}

// Base kernel (paper §III-A): each subsystem (up to lmax rows) is loaded into shared memory,
// normalised, split by log2(tsw) PCR steps into tsw interleaved subsystems, which tsw
// threads then solve by Thomas (the PCR-Thomas hybrid). All block threads share the loads
// and PCR steps (memory-level parallelism); tsw threads per subsystem do the Thomas part.
// Shared memory: spb * lmax * 6 values (a, c, d, ping-pong).
// Subsystems per block of k_pcr_thomas at most (their lengths and offsets are cached in
// static shared memory so the inner loops do no 64-bit division).
constexpr int kMaxSpb = 64;
constexpr int kPcrThomasStaticSmem = kMaxSpb * (sizeof(long) + sizeof(int));

template <class T>
__global__ void k_pcr_thomas(Coeffs<T> s, T* x, View v, int tsw, int lmax, int spb) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ long s_base[kMaxSpb];
  __shared__ int s_len[kMaxSpb];
  T* sh = reinterpret_cast<T*>(smem_raw);
  const long g0 = static_cast<long>(blockIdx.x) * spb;
  const int total = spb * lmax;
  const long estride = v.K * v.J;
  if (threadIdx.x < spb) {
    const long g = g0 + threadIdx.x;
    long L = 0, b = 0;
    if (g < v.num()) {
      const long p = g / v.K, j = g - p * v.K;
      L = v.len(j);
      b = v.mem(p, j, 0);
    }
    s_len[threadIdx.x] = static_cast<int>(L > 0 ? L : 0);
    s_base[threadIdx.x] = b;
  }
  __syncthreads();
  auto sys_len = [&](int w) -> int { return s_len[w]; };
  auto sys_mem = [&](int w, long t) -> long { return s_base[w] + t * estride; };
  // Load and normalise; corner entries outside the subsystem become exact zeros.
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const int w = idx / lmax;
    const int t = idx - w * lmax;
    const int L = sys_len(w);
    if (t >= L) continue;
    const long m = sys_mem(w, t);
    T* base = sh + static_cast<long>(w) * lmax * 6;
    const T inv = T(1) / load_b(s, m);
    base[t] = (t > 0 ? s.a[m] : T(0)) * inv;
    base[lmax + t] = (t + 1 < L ? s.c[m] : T(0)) * inv;
    base[2 * lmax + t] = s.d[m] * inv;
  }
  __syncthreads();
  int cur = 0;
  for (int h = 1; h < tsw; h <<= 1) {
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
      const int w = idx / lmax;
      const int t = idx - w * lmax;
      const int L = sys_len(w);
      if (t >= L) continue;
      T* base = sh + static_cast<long>(w) * lmax * 6;
      const T* ia = base + cur * 3 * lmax;
      const T* ic = ia + lmax;
      const T* id = ic + lmax;
      T* oa = base + (cur ^ 1) * 3 * lmax;
      T* oc = oa + lmax;
      T* od = oc + lmax;
      // Unit-diagonal PCR: row_t - a_t row_{t-h} - c_t row_{t+h}, one division per row.
      T at = ia[t], ct = ic[t], r = T(1), a = T(0), c = T(0), d = id[t];
      if (t - h >= 0) {
        r -= at * ic[t - h];
        a = -at * ia[t - h];
        d -= at * id[t - h];
      }
      if (t + h < L) {
        r -= ct * ia[t + h];
        c = -ct * ic[t + h];
        d -= ct * id[t + h];
      }
      const T inv = T(1) / r;
      oa[t] = a * inv;
      oc[t] = c * inv;
      od[t] = d * inv;
    }
    __syncthreads();
    cur ^= 1;
  }
  // Thomas on rows lane, lane+tsw, ... (the tsw subsystems PCR left); conflict-free since
  // consecutive lanes touch consecutive words.
  if (threadIdx.x < spb * tsw) {
    const int w = threadIdx.x / tsw, lane = threadIdx.x - w * tsw;
    const int L = sys_len(w);
    if (lane < L) {
      T* base = sh + static_cast<long>(w) * lmax * 6 + cur * 3 * lmax;
      T* A = base;
      T* C = base + lmax;
      T* D = C + lmax;
      T cprev = C[lane], dprev = D[lane];
      int t = lane;
      for (int u = lane + tsw; u < L; u += tsw) {
        const T a = A[u];
        const T inv = T(1) / (T(1) - a * cprev);
        cprev = C[u] * inv;
        dprev = (D[u] - a * dprev) * inv;
        C[u] = cprev;
        D[u] = dprev;
        t = u;
      }
      T xn = dprev;
      x[sys_mem(w, t)] = xn;
      for (int u = t - tsw; u >= 0; u -= tsw) {
        xn = D[u] - C[u] * xn;
        x[sys_mem(w, u)] = xn;
      }
    }
  }
}

// Base kernel, O(n) variant (BaseKernel::partition): the partition method inside a block.
// Each subsystem (up to lmax rows) is loaded into shared memory normalised to a unit
// diagonal; thread j of the subsystem's tps threads eliminates its own chunk of m rows
// (the last chunk takes the remainder, < 2m) to the chunk's two end rows exactly as
// k_partition_reduce does, the interface system (2 rows per chunk) is solved by PCR in
// shared memory, every thread substitutes its chunk's interior rows and the block writes
// the solution back. Shared-memory work is O(lmax) per subsystem (about 16 accesses per
// row) plus O((lmax/m) log(lmax/m)) for the interface, against O(lmax log tsw) for PCR-Thomas.
// Shared memory per subsystem: partition_base_words(lmax, m) values.
template <class T>
__host__ __device__ inline int partition_base_pad(int e) {
  return e + e / static_cast<int>(128 / sizeof(T));  // one pad word per 128 bytes
}
template <class T>
__host__ __device__ inline int partition_base_tps(int lmax, int m) {
  return lmax / m > 1 ? lmax / m : 1;
}
template <class T>
__host__ __device__ inline long partition_base_words(int lmax, int m) {
  const int rows = partition_base_pad<T>(lmax) + 1;
  return 3L * rows + 6L * 2 * partition_base_tps<T>(lmax, m);
}

template <class T>
__global__ void k_partition_base(Coeffs<T> s, T* x, View v, int lmax, int m, int spb) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ long s_base[kMaxSpb];
  __shared__ int s_len[kMaxSpb];
  T* sh = reinterpret_cast<T*>(smem_raw);
  const long g0 = static_cast<long>(blockIdx.x) * spb;
  const long estride = v.K * v.J;
  const int rows = partition_base_pad<T>(lmax) + 1;
  const int tps = partition_base_tps<T>(lmax, m);
  const int R = 2 * tps;
  const long words = partition_base_words<T>(lmax, m);
  if (threadIdx.x < spb) {
    const long g = g0 + threadIdx.x;
    long L = 0, b = 0;
    if (g < v.num()) {
      const long p = g / v.K, j = g - p * v.K;
      L = v.len(j);
      b = v.mem(p, j, 0);
    }
    s_len[threadIdx.x] = static_cast<int>(L > 0 ? L : 0);
    s_base[threadIdx.x] = b;
  }
  __syncthreads();
  const int total = spb * lmax;
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const int w = idx / lmax;
    const int t = idx - w * lmax;
    const int L = s_len[w];
    if (t >= L) continue;
    const long mm = s_base[w] + t * estride;
    T* A = sh + w * words;
    const int q = partition_base_pad<T>(t);
    const T inv = T(1) / load_b(s, mm);
    A[q] = (t > 0 ? s.a[mm] : T(0)) * inv;
    A[rows + q] = (t + 1 < L ? s.c[mm] : T(0)) * inv;
    A[2 * rows + q] = s.d[mm] * inv;
  }
  __syncthreads();
  // Chunk elimination: thread (w, j) owns rows [ls, le] of subsystem w.
  const int w = threadIdx.x / tps, j = threadIdx.x - (threadIdx.x / tps) * tps;
  const bool active_sys = w < spb;
  const int L = active_sys ? s_len[w] : 0;
  const int nch = L / m > 1 ? L / m : 1;
  const bool active = active_sys && j < nch && L > 0;
  T* A = sh + (active_sys ? w : 0) * words;
  T* C = A + rows;
  T* D = C + rows;
  T* I0 = D + rows;  // interface: a, c, d (ping), then a, c, d (pong), R each
  const int ls = j * m;
  const int le = (j == nch - 1) ? L - 1 : ls + m - 1;
  if (active) {
    if (le == ls) {  // a 1-row subsystem: x = d
      const T dv = D[partition_base_pad<T>(ls)];
      I0[2 * j] = T(0);
      I0[R + 2 * j] = T(0);
      I0[2 * R + 2 * j] = dv;
      I0[2 * j + 1] = T(0);
      I0[R + 2 * j + 1] = T(0);
      I0[2 * R + 2 * j + 1] = dv;
    } else {
      int q = partition_base_pad<T>(ls + 1);
      T al = A[q], ga = C[q], de = D[q];
      for (int i = ls + 2; i <= le; ++i) {
        q = partition_base_pad<T>(i);
        const T ai = A[q];
        const T inv = T(1) / (T(1) - ai * ga);
        al = -ai * al * inv;
        ga = C[q] * inv;
        de = (D[q] - ai * de) * inv;
        A[q] = al;
        C[q] = ga;
        D[q] = de;
      }
      T ap = T(0), gp = T(-1), dp = T(0);
      for (int i = le - 1; i > ls; --i) {
        q = partition_base_pad<T>(i);
        const T gi = C[q];
        dp = D[q] - gi * dp;
        ap = A[q] - gi * ap;
        gp = -gi * gp;
        A[q] = ap;
        C[q] = gp;
        D[q] = dp;
      }
      const int qs = partition_base_pad<T>(ls);
      const T cs = C[qs];
      const T inv = T(1) / (T(1) - cs * ap);
      I0[2 * j] = A[qs] * inv;
      I0[R + 2 * j] = -cs * gp * inv;
      I0[2 * R + 2 * j] = (D[qs] - cs * dp) * inv;
      I0[2 * j + 1] = al;
      I0[R + 2 * j + 1] = ga;
      I0[2 * R + 2 * j + 1] = de;
    }
  }
  __syncthreads();
  // PCR on the interface system (2 nch rows), unit diagonal, two rows per thread.
  const int RI = 2 * nch;
  int cur = 0;
  for (int h = 1; h < R; h <<= 1) {
    if (active) {
      const T* ia = I0 + cur * 3 * R;
      const T* ic = ia + R;
      const T* id = ic + R;
      T* oa = I0 + (cur ^ 1) * 3 * R;
      T* oc = oa + R;
      T* od = oc + R;
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int t = 2 * j + k;
        T at = ia[t], ct = ic[t], r = T(1), a = T(0), c = T(0), d = id[t];
        if (t - h >= 0) {
          r -= at * ic[t - h];
          a = -at * ia[t - h];
          d -= at * id[t - h];
        }
        if (t + h < RI) {
          r -= ct * ia[t + h];
          c = -ct * ic[t + h];
          d -= ct * id[t + h];
        }
        const T inv = T(1) / r;
        oa[t] = a * inv;
        oc[t] = c * inv;
        od[t] = d * inv;
      }
    }
    __syncthreads();
    cur ^= 1;
  }
  // Substitution into D.
  if (active) {
    const T* xd = I0 + cur * 3 * R + 2 * R;
    const T xs = xd[2 * j], xe = xd[2 * j + 1];
    for (int i = ls + 1; i < le; ++i) {
      const int q = partition_base_pad<T>(i);
      D[q] = D[q] - A[q] * xs - C[q] * xe;
    }
    D[partition_base_pad<T>(ls)] = xs;
    D[partition_base_pad<T>(le)] = xe;
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const int ww = idx / lmax;
    const int t = idx - ww * lmax;
    if (t >= s_len[ww]) continue;
    x[s_base[ww] + t * estride] = sh[ww * words + 2 * rows + partition_base_pad<T>(t)];
  }
}

// Shared-memory words per array per warp for k_partition_reduce: a window of < 33m rows
// plus one pad word per 32 (conflict-free strided chunk walks for power-of-two m).
__host__ __device__ inline int partition_stride(int m) { return 33 * m + (33 * m) / 32 + 1; }

// Partition splitting (stage 1 alternative), pass 1, contiguous parents (J == 1, K == 1):
// parent p is cut into Pc = n / m chunks of m rows (the last takes the remainder, < 2m).
// Within a chunk [s, e] a forward sweep writes each row as alpha x_s + x_i + gamma x_{i+1}
// = delta and a backward sweep as x_i = delta' - alpha' x_s - gamma' x_e; the chunk's
// first and last rows then couple only x_e(prev), x_s, x_e, x_s(next): two rows of a
// tridiagonal interface system per chunk. A warp stages its 32 chunks through shared
// memory so global loads and stores stay coalesced.
template <class T>
__global__ void k_partition_reduce(Coeffs<T> s, T* alpha, T* gamma, T* dprime, T* ra, T* rb, T* rc,
                                   T* rd, long parents, long n, int m) {
  extern __shared__ unsigned char smem_raw[];
  const long Pc = n / m;
  const long warps_per_parent = (Pc + 31) / 32;
  const int warp_in_block = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long gw = static_cast<long>(blockIdx.x) * (blockDim.x >> 5) + warp_in_block;
  if (gw >= parents * warps_per_parent) return;
  const long p = gw / warps_per_parent;
  const long c0 = (gw - p * warps_per_parent) * 32;
  const long w0 = c0 * m;
  const long w1 = (c0 + 32 >= Pc) ? n : (c0 + 32) * m;
  const int wn = static_cast<int>(w1 - w0);
  const int stride = partition_stride(m);
  T* sa = reinterpret_cast<T*>(smem_raw) + static_cast<long>(warp_in_block) * 4 * stride;
  T* sb = sa + stride;
  T* sc = sb + stride;
  T* sd = sc + stride;
  auto pad = [](int e) { return e + (e >> 5); };
  const long base = p * n + w0;
  for (int e = lane; e < wn; e += 32) {
    const long u = w0 + e;
    sa[pad(e)] = u > 0 ? s.a[base + e] : T(0);
    sb[pad(e)] = load_b(s, base + e);
    sc[pad(e)] = u + 1 < n ? s.c[base + e] : T(0);
    sd[pad(e)] = s.d[base + e];
  }
  __syncwarp();
  const long cidx = c0 + lane;
  if (cidx < Pc) {
    const int ls = lane * m;
    const int le = (cidx == Pc - 1) ? wn - 1 : ls + m - 1;
    // Forward sweep over rows s+1..e: (alpha, gamma, delta) into the a, c, d slots.
    int q = pad(ls + 1);
    T inv = T(1) / sb[q];
    T al = sa[q] * inv, ga = sc[q] * inv, de = sd[q] * inv;
    sa[q] = al;
    sc[q] = ga;
    sd[q] = de;
    for (int i = ls + 2; i <= le; ++i) {
      q = pad(i);
      const T ai = sa[q];
      inv = T(1) / (sb[q] - ai * ga);
      al = -ai * al * inv;
      ga = sc[q] * inv;
      de = (sd[q] - ai * de) * inv;
      sa[q] = al;
      sc[q] = ga;
      sd[q] = de;
    }
    const T al_e = al, ga_e = ga, de_e = de;
    // Backward sweep over rows e-1..s+1: x_i = delta' - alpha' x_s - gamma' x_e.
    T ap = T(0), gp = T(-1), dp = T(0);  // row e itself: x_e = 0 - 0 x_s - (-1) x_e
    for (int i = le - 1; i > ls; --i) {
      q = pad(i);
      const T gi = sc[q];
      dp = sd[q] - gi * dp;
      ap = sa[q] - gi * ap;
      gp = -gi * gp;
      sa[q] = ap;
      sc[q] = gp;
      sd[q] = dp;
    }
    // Interface rows: first row with x_{s+1} substituted, last row as forward left it.
    const int qs = pad(ls);
    const T cs = sc[qs];
    const long r = p * 2 * Pc + 2 * cidx;
    ra[r] = sa[qs];
    rb[r] = sb[qs] - cs * ap;
    rc[r] = -cs * gp;
    rd[r] = sd[qs] - cs * dp;
    ra[r + 1] = al_e;
    rb[r + 1] = T(1);
    rc[r + 1] = ga_e;
    rd[r + 1] = de_e;
  }
  __syncwarp();
  for (int e = lane; e < wn; e += 32) {
    alpha[base + e] = sa[pad(e)];
    gamma[base + e] = sc[pad(e)];
    dprime[base + e] = sd[pad(e)];
  }
}

// Partition splitting, pass 1 for any parent layout (interleaved parents: consecutive
// threads take consecutive parents, so every access is coalesced); the sweeps go through
// global memory (alpha, gamma, dprime hold forward then backward values).
template <class T>
__global__ void k_partition_reduce_strided(Coeffs<T> s, T* alpha, T* gamma, T* dprime, T* ra,
                                           T* rb, T* rc, T* rd, View v, int m) {
  const long n = v.L0, Pc = n / m;
  const long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (idx >= v.parents * Pc) return;
  const long cidx = idx / v.parents, p = idx - cidx * v.parents;
  const long ls = cidx * m, le = (cidx == Pc - 1) ? n - 1 : ls + m - 1;
  auto M = [&](long u) { return p * v.P + u * v.J; };
  long q = M(ls + 1);
  T inv = T(1) / load_b(s, q);
  T al = s.a[q] * inv, ga = (ls + 2 < n ? s.c[q] : T(0)) * inv, de = s.d[q] * inv;
  alpha[q] = al;
  gamma[q] = ga;
  dprime[q] = de;
  for (long i = ls + 2; i <= le; ++i) {
    q = M(i);
    const T ai = s.a[q];
    const T ci = (i + 1 < n) ? s.c[q] : T(0);
    inv = T(1) / (load_b(s, q) - ai * ga);
    al = -ai * al * inv;
    ga = ci * inv;
    de = (s.d[q] - ai * de) * inv;
    alpha[q] = al;
    gamma[q] = ga;
    dprime[q] = de;
  }
  T ap = T(0), gp = T(-1), dp = T(0);
  for (long i = le - 1; i > ls; --i) {
    q = M(i);
    const T gi = gamma[q];
    dp = dprime[q] - gi * dp;
    ap = alpha[q] - gi * ap;
    gp = -gi * gp;
    alpha[q] = ap;
    gamma[q] = gp;
    dprime[q] = dp;
  }
  const long qs = M(ls);
  const T cs = s.c[qs];
  const long r = p * 2 * Pc + 2 * cidx;
  ra[r] = ls > 0 ? s.a[qs] : T(0);
  rb[r] = load_b(s, qs) - cs * ap;
  rc[r] = -cs * gp;
  rd[r] = s.d[qs] - cs * dp;
  ra[r + 1] = al;
  rb[r + 1] = T(1);
  rc[r + 1] = ga;
  rd[r + 1] = de;
}

// Partition splitting, pass 3: every row from its chunk's two interface unknowns
// (3 arrays read, 1 written; the interface solution is tiny and cached).
template <class T>
__global__ void k_partition_substitute(const T* alpha, const T* gamma, const T* dprime,
                                       const T* xr, T* x, View v, int m) {
  const long n = v.L0, Pc = n / m;
  const long total = v.parents * n;
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long>(gridDim.x) * blockDim.x) {
    long p, u;
    split_index(idx, v.parents, n, v.J, p, u);
    long cidx = u / m;
    if (cidx >= Pc) cidx = Pc - 1;
    const long ls = cidx * m, le = (cidx == Pc - 1) ? n - 1 : ls + m - 1;
    const T xs = xr[p * 2 * Pc + 2 * cidx], xe = xr[p * 2 * Pc + 2 * cidx + 1];
    const long q = p * v.P + u * v.J;
    T val;
    if (u == ls)
      val = xs;
    else if (u == le)
      val = xe;
    else
      val = dprime[q] - alpha[q] * xs - gamma[q] * xe;
    x[q] = val;
  }
}

// Cyclic systems (Sherman-Morrison, as solvers/thomas.hpp): modified diagonal bb and the
// correction right-hand side z, gamma = -b[0]. Element-wise over parents (v.K == 1).
template <class T>
__global__ void k_cyclic_prepare(Coeffs<T> s, T* bb, T* z, View v) {
  const long total = v.parents * v.L0;
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long>(gridDim.x) * blockDim.x) {
    long p, u;
    split_index(idx, v.parents, v.L0, v.J, p, u);
    const long q = p * v.P + u * v.J;
    const long q0 = p * v.P, ql = p * v.P + (v.L0 - 1) * v.J;
    const T gam = -s.b[q0];
    T bv = s.b[q], zv = T(0);
    if (u == 0) {
      bv -= gam;
      zv = gam;
    }
    if (u == v.L0 - 1) {
      bv -= s.a[q0] * s.c[ql] / gam;
      zv = s.c[ql];
    }
    bb[q] = bv;
    z[q] = zv;
  }
}

// Per parent: f = (y0 + alpha y_last / gamma) / (1 + z0 + alpha z_last / gamma).
template <class T>
__global__ void k_cyclic_factor(Coeffs<T> s, const T* y, const T* z, T* f, View v) {
  const long p = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (p >= v.parents) return;
  const long q0 = p * v.P, ql = p * v.P + (v.L0 - 1) * v.J;
  const T gam = -s.b[q0], al = s.a[q0];
  f[p] = (y[q0] + al * y[ql] / gam) / (T(1) + z[q0] + al * z[ql] / gam);
}

template <class T>
__global__ void k_cyclic_correct(T* y, const T* z, const T* f, View v) {
  const long total = v.parents * v.L0;
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long>(gridDim.x) * blockDim.x) {
    long p, u;
    split_index(idx, v.parents, v.L0, v.J, p, u);
    const long q = p * v.P + u * v.J;
    y[q] -= f[p] * z[q];
  }
}

// A 1x1 cyclic system: a and c both couple x[0] to itself.
template <class T>
__global__ void k_cyclic_single(Coeffs<T> s, T* x, long count) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = s.d[i] / (s.a[i] + s.b[i] + s.c[i]);
}

}  // namespace adi3d::tridiag::detail
