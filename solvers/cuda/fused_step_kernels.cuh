#pragma once
// Kernels of the fused Douglas step (fused_step.cu; fused_step_tune.cu times variants).
// Internal to the CUDA backend.
//
// Line solves: every line of a pass has the same tridiagonal matrix (constant alpha), so
// the Thomas factors (inv, a*inv per interior row) are shared. A warp solves one line:
// lane p owns the rows [p C, p C + C) (C odd, so the 32 lanes' rows fall in 32 different
// shared-memory banks; rows past the line are padding) and runs both Thomas recurrences, y_r = inv_r d_r + beta_r y_{r-1}
// and x_r = y_r + beta_r x_{r+1} (beta = -a inv; a = c on interior rows of constant
// alpha, so the backward factor -c inv is the same array), on its chunk from a zero
// start; the true start values come from a warp scan of the chunks' affine maps (5
// shuffle steps), and the homogeneous correction is added in a second pass over the
// chunk. The dependent chain is 4 C + 10 steps instead of 2 n.
//
// Pass x (k-marching): a block owns L neighbouring x lines (j0..j0+L-1) and a range of
// planes k. Planes of u with a one-line halo in j ((L+2) nx values, one contiguous range
// of memory) stream through a ring of NS shared-memory slots by cp.async, NS-3 planes
// ahead of the plane being solved, so every u value comes from DRAM once and from L2
// about (L+2)/L times; the rhs dt (A u + f) is formed from the slots directly in the
// chunk layout of the solve. Warp w forms, solves and stores line j0+w.
//
// Passes y and z (persistent, double-buffered): a block walks tiles of L lines
// (consecutive i, L sizeof(T) = 64 bytes per row) by R = n-2 interior rows, loading the
// next tile by cp.async while it solves and stores the current one. Rows are swizzled so
// that both the row-wise copies and the chunk-wise solve are free of bank conflicts.
#include <cuda_runtime.h>

#include <cstddef>

namespace adi3d::cuda::fused {

// ---------------------------------------------------------------------------------------
// cp.async (sm_80+): global -> shared without registers; src_bytes = 0 zero-fills.
template <int kBytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src = valid ? kBytes : 0;
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem), "n"(kBytes),
                 "r"(src)
                 : "memory");
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

// ---------------------------------------------------------------------------------------
// Warp line solve. Lane p owns rows [p C, p C + C) (C odd); rows from R up to 32 C are
// padding with alpha = 0 (so beta = 0 too): they solve to 0 and leave the real rows
// alone, and no row needs a bounds check. v[l][q] holds row p C + q of line l of this
// warp; on return it holds the solution. alpha[r] = inv of interior row r (shared
// memory); beta_r = -a inv = s alpha_r with s = -a (constant alpha: the same a and c on
// every interior row, so s alpha_r is bit for bit the host's -a*inv and -c*inv). Every
// lane of the warp must call it.
template <class T, int C, int LPW>
__device__ __forceinline__ void warp_solve(T (&v)[LPW][C], const T* alpha, T s) {
  const int lane = threadIdx.x & 31;
  const T* al = alpha + lane * C;
  constexpr unsigned kAll = 0xffffffffu;
  // Forward, from y = 0 before the chunk: y_r = alpha_r d_r + beta_r y_{r-1}.
  T y[LPW];
  T A = T(1);  // product of beta over the chunk: y_end = A y_in + y_local_end
#pragma unroll
  for (int l = 0; l < LPW; ++l) y[l] = T(0);
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T a = al[q], b = s * a;
    A *= b;
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      y[l] = fma(b, y[l], a * v[l][q]);
      v[l][q] = y[l];
    }
  }
  // Inclusive scan of the chunks' maps y -> A y + B over the lanes.
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T Ap = __shfl_up_sync(kAll, A, d);
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      const T Bp = __shfl_up_sync(kAll, y[l], d);
      if (lane >= d) y[l] = fma(A, Bp, y[l]);
    }
    if (lane >= d) A *= Ap;
  }
  // y before this chunk; add its homogeneous response h_r = beta_r h_{r-1}.
  T h[LPW];
#pragma unroll
  for (int l = 0; l < LPW; ++l) {
    h[l] = __shfl_up_sync(kAll, y[l], 1);
    if (lane == 0) h[l] = T(0);
  }
#pragma unroll
  for (int q = 0; q < C; ++q) {
    const T b = s * al[q];
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      h[l] *= b;
      v[l][q] += h[l];
    }
  }
  // Backward, from x = 0 after the chunk: x_r = y_r + beta_r x_{r+1}.
  T x[LPW];
  A = T(1);
#pragma unroll
  for (int l = 0; l < LPW; ++l) x[l] = T(0);
#pragma unroll
  for (int q = C - 1; q >= 0; --q) {
    const T b = s * al[q];
    A *= b;
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      x[l] = fma(b, x[l], v[l][q]);
      v[l][q] = x[l];
    }
  }
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T An = __shfl_down_sync(kAll, A, d);
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      const T Bn = __shfl_down_sync(kAll, x[l], d);
      if (lane + d < 32) x[l] = fma(A, Bn, x[l]);
    }
    if (lane + d < 32) A *= An;
  }
#pragma unroll
  for (int l = 0; l < LPW; ++l) {
    h[l] = __shfl_down_sync(kAll, x[l], 1);
    if (lane == 31) h[l] = T(0);
  }
#pragma unroll
  for (int q = C - 1; q >= 0; --q) {
    const T b = s * al[q];
#pragma unroll
    for (int l = 0; l < LPW; ++l) {
      h[l] *= b;
      v[l][q] += h[l];
    }
  }
}

// Factors of this axis (layout inv[n], ainv[n], cp[n]) to shared memory as alpha[r] =
// inv[r+1] over the R interior rows, zero over the padding up to 32 C.
template <class T, int C>
__device__ __forceinline__ void load_factors(const T* factors, int n, T* alpha) {
  for (int r = threadIdx.x; r < 32 * C; r += blockDim.x) alpha[r] = r < n - 2 ? factors[r + 1] : T(0);
}

template <class T>
struct PassArgs {
  int n[3];
  T w[3];            // interior row weights per axis
  T dt;
  const T* u_in;     // u^n (x pass)
  const T* f;        // source or null (x pass)
  T* d;              // stage array
  T* u;              // u, updated in place (z pass)
  const T* factors;  // this axis: inv[n], a*inv[n], cp[n] (interior rows valid)
  T s;               // this axis: -a = -c of the interior rows (tau w)
  int kseg;          // x pass: planes per block
  int vec16;         // x pass: rows of u are 16-byte aligned (16-byte copies)
};

// ---------------------------------------------------------------------------------------
// Pass x. Block 32 L threads; grid (ceil((ny-2)/L), ceil((nz-2)/kseg)). Dynamic shared
// memory: x_pass_smem_bytes.
template <class T, int L, int NS>
constexpr std::size_t x_slot_elems(int nx) {
  return static_cast<std::size_t>(L + 2) * nx;
}
template <class T, int L, int NS, int C>
std::size_t x_pass_smem_bytes(int nx) {
  return (NS * x_slot_elems<T, L, NS>(nx) + 32 * C) * sizeof(T);
}

template <class T, int L, int NS, int C, bool kSource>
__global__ void __launch_bounds__(32 * L) x_pass_kernel(PassArgs<T> a) {
  static_assert(NS >= 4, "three planes are read while the next one loads");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* slots = reinterpret_cast<T*>(smem_raw);
  const int nx = a.n[0], ny = a.n[1], nz = a.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int R = nx - 2;
  const std::size_t slot_elems = x_slot_elems<T, L, NS>(nx);
  T* alpha = slots + NS * slot_elems;
  const int j0 = 1 + blockIdx.x * L;
  const int kb = 1 + blockIdx.y * a.kseg;
  const int ke = min(kb + a.kseg, nz - 1);  // planes kb..ke-1 are solved
  if (kb >= ke) return;
  const int tid = threadIdx.x;
  constexpr int kThreads = 32 * L;
  load_factors<T, C>(a.factors, nx, alpha);

  // Plane k of u, lines j0-1..j0+L (those inside the grid), into slot k % NS: one
  // contiguous range of memory.
  const int rows = min(L + 2, ny - (j0 - 1));
  const int count = rows * nx;
  auto issue_plane = [&](int k) {
    T* dst = slots + (k % NS) * slot_elems;
    const T* src = a.u_in + nxy * k + static_cast<std::size_t>(j0 - 1) * nx;
    if (a.vec16) {
      constexpr int V = 16 / sizeof(T);
      for (int e = tid * V; e < count; e += kThreads * V) cp_async<16>(dst + e, src + e, true);
    } else {
      for (int e = tid; e < count; e += kThreads) cp_async<sizeof(T)>(dst + e, src + e, true);
    }
  };
  issue_plane(kb - 1);
  issue_plane(kb);
  issue_plane(kb + 1);
  cp_async_commit();
#pragma unroll
  for (int s = 2; s <= NS - 3; ++s) {
    if (kb + s <= ke) issue_plane(kb + s);
    cp_async_commit();
  }

  const int warp = tid / 32, lane = tid & 31;
  const int j = j0 + warp;
  const bool line = j <= ny - 2;
  const int r0 = lane * C;
  const T wx = a.w[0], wy = a.w[1], wz = a.w[2];
  for (int k = kb; k < ke; ++k) {
    cp_async_wait<NS - 4>();  // plane k+1 has landed (this thread's copies)
    __syncthreads();          // everyone's copies; everyone is done with plane k-2
    if (k + NS - 2 <= ke) issue_plane(k + NS - 2);
    cp_async_commit();
    if (!line) continue;
    const std::size_t row = nxy * k + static_cast<std::size_t>(j) * nx;
    if (kSource && k + 1 < ke) {
      for (int i = lane * (128 / sizeof(T)); i < nx; i += 32 * (128 / sizeof(T)))
        prefetch_l2(a.f + row + nxy + i);
    }
    const T* sc = slots + (k % NS) * slot_elems + (warp + 1) * nx;
    const T* sn = sc - nx;
    const T* ss = sc + nx;
    T* sm = slots + ((k + NS - 1) % NS) * slot_elems + (warp + 1) * nx;  // plane k-1
    const T* sp = slots + ((k + 1) % NS) * slot_elems + (warp + 1) * nx;
    T v[1][C];
#pragma unroll
    for (int q = 0; q < C; ++q) {
      const int i = min(1 + r0 + q, nx - 2);  // padding rows: any finite value (alpha = 0)
      const T uc = sc[i];
      T sum = wx * (sc[i - 1] - uc) + wx * (sc[i + 1] - uc);
      sum += wy * (sn[i] - uc) + wy * (ss[i] - uc);
      sum += wz * (sm[i] - uc) + wz * (sp[i] - uc);
      v[0][q] = sum;
    }
    // Row j of plane k-1 is read by this warp alone from here on: it becomes the
    // warp's staging row for f and for the transposed store.
    __syncwarp();
    if (kSource) {
      for (int i = 1 + lane; i < nx - 1; i += 32) sm[i] = a.f[row + i];
      __syncwarp();
#pragma unroll
      for (int q = 0; q < C; ++q) v[0][q] += sm[min(1 + r0 + q, nx - 2)];
    }
#pragma unroll
    for (int q = 0; q < C; ++q) v[0][q] *= a.dt;
    warp_solve<T, C, 1>(v, alpha, a.s);
    __syncwarp();
#pragma unroll
    for (int q = 0; q < C; ++q)
      if (r0 + q < R) sm[1 + r0 + q] = v[0][q];
    __syncwarp();
    for (int i = 1 + lane; i < nx - 1; i += 32) a.d[row + i] = sm[i];
  }
}

// ---------------------------------------------------------------------------------------
// Passes y (kAxis 1) and z (kAxis 2). Block 256 threads, persistent over the tiles
// (ceil(nx / L) per line of tiles, times n_other - 2). kBufs 2: the next tile loads while
// this one is solved and stored; 1: one tile at a time (other blocks on the SM overlap).
// kAsyncU (z): u of the tile comes by cp.async too, else by loads in the update loop
// (after an L2 prefetch when kPrefetchU). Dynamic shared memory: yz_pass_smem_bytes.
// Tiles hold 32 C rows (R real, then zero padding for the solve).
template <class T, int L, int C, int kBufs, bool kAsyncU>
std::size_t yz_pass_smem_bytes() {
  const std::size_t tile = static_cast<std::size_t>(32 * C) * L;
  return (kBufs * (kAsyncU ? 2 : 1) * tile + 32 * C) * sizeof(T);
}

// Element (r, l) of a tile: rows of L values, the column xor-swizzled by r / 2 so that
// lanes reading rows p c + q (c odd) of one column hit different banks.
template <int L>
__device__ __forceinline__ int yz_swizzle(int r, int l) {
  return r * L + (l ^ ((r >> 1) & (L - 1)));
}

// Blocks per SM the register budget is cut for (the tiles of n = 512 allow 3).
template <class T, int C>
constexpr int yz_min_blocks() {
  return C <= 9 || (C <= 17 && sizeof(T) == 4) ? 3 : C <= 17 ? 2 : 1;
}

template <class T, int L, int C, int kAxis, int kBufs, bool kAsyncU, bool kPrefetchU>
__global__ void __launch_bounds__(256, yz_min_blocks<T, C>()) yz_pass_kernel(PassArgs<T> a) {
  constexpr int kThreads = 256;
  constexpr int LPW = L / 8;        // lines per warp
  constexpr int RS = kThreads / L;  // rows per sweep of the block
  static_assert(L % 8 == 0 && (L & (L - 1)) == 0, "L: a power of two, at least 8");
  static_assert(kBufs == 1 || kBufs == 2, "one or two tile buffers");
  static_assert(kAxis == 2 || !kAsyncU, "u only in the z pass");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* buf = reinterpret_cast<T*>(smem_raw);
  const int nx = a.n[0], ny = a.n[1];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  const int n = a.n[kAxis];
  const int R = n - 2;
  constexpr int tile_elems = 32 * C * L;
  T* ubuf = buf + kBufs * tile_elems;
  T* alpha = ubuf + (kAsyncU ? kBufs : 0) * tile_elems;
  const int tiles_i = (nx + L - 1) / L;
  const int total = tiles_i * ((kAxis == 1 ? a.n[2] : ny) - 2);
  const int tid = threadIdx.x;
  load_factors<T, C>(a.factors, n, alpha);
  // The padding rows of the d tiles stay zero: no copy writes them, and they solve to 0.
  for (int b = 0; b < kBufs; ++b)
    for (int e = R * L + tid; e < tile_elems; e += kThreads) buf[b * tile_elems + e] = T(0);

  // Copies and stores: thread tid always takes column col = tid % L, rows row0 + s RS.
  const int col = tid % L, row0 = tid / L;
  const std::size_t row_stride = kAxis == 1 ? static_cast<std::size_t>(nx) : nxy;
  const std::size_t sweep = RS * row_stride;
  // Offset of (row row0, column col) of tile t; ok: that column is an unknown line.
  auto offset = [&](int t, bool& ok) -> std::size_t {
    const int i = (t % tiles_i) * L + col;
    const std::size_t o = 1 + t / tiles_i;
    ok = i >= 1 && i <= nx - 2;
    return i + (kAxis == 1 ? nxy * o : nx * o) + (1 + row0) * row_stride;
  };
  auto copy_rows = [&](const T* base, T* dst, std::size_t p0, bool ok) {
    const T* src = base + p0;
    for (int r = row0; r < R; r += RS, src += sweep)
      cp_async<sizeof(T)>(dst + yz_swizzle<L>(r, col), ok ? src : base, ok);
  };
  // Tile t (and its u where kAsyncU) into buffer b.
  auto issue_tile = [&](int t, int b) {
    bool ok;
    const std::size_t p0 = offset(t, ok);
    copy_rows(a.d, buf + b * tile_elems, p0, ok);
    if (kAsyncU) copy_rows(a.u, ubuf + b * tile_elems, p0, ok);
    // z: u of that tile into L2 for its update, one prefetch per 32-byte sector.
    constexpr int kSector = 32 / static_cast<int>(sizeof(T));
    if (kPrefetchU && kAxis == 2 && ok && (col % kSector == 0 || col == 1)) {
      const T* up = a.u + p0;
      for (int r = row0; r < R; r += RS, up += sweep) prefetch_l2(up);
    }
  };

  const int G = gridDim.x;
  int t = blockIdx.x;
  if (kBufs == 2) {
    if (t < total) issue_tile(t, 0);
    cp_async_commit();
  }
  const int warp = tid / 32;
  const int r0 = (tid & 31) * C;
  for (int b = 0; t < total; t += G, b ^= (kBufs - 1)) {
    T* cur = buf + b * tile_elems;
    __syncthreads();  // the stores from the buffer about to be refilled are done
    if (kBufs == 2) {
      if (t + G < total) issue_tile(t + G, b ^ 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      issue_tile(t, 0);
      cp_async_commit();
      cp_async_wait<0>();
    }
    __syncthreads();
#pragma unroll 1
    for (int l = warp * LPW; l < (warp + 1) * LPW; ++l) {  // one line at a time: registers
      T v[1][C];
#pragma unroll
      for (int q = 0; q < C; ++q) v[0][q] = cur[yz_swizzle<L>(r0 + q, l)];
      warp_solve<T, C, 1>(v, alpha, a.s);
#pragma unroll
      for (int q = 0; q < C; ++q) cur[yz_swizzle<L>(r0 + q, l)] = v[0][q];
    }
    __syncthreads();
    bool ok;
    const std::size_t p0 = offset(t, ok);
    if (!ok) continue;
    if (kAxis == 1) {
      T* dst = a.d + p0;
      for (int r = row0; r < R; r += RS, dst += sweep) *dst = cur[yz_swizzle<L>(r, col)];
    } else if (kAsyncU) {
      // This thread copied exactly these elements of u: no barrier needed.
      const T* uc = ubuf + b * tile_elems;
      T* up = a.u + p0;
      for (int r = row0; r < R; r += RS, up += sweep) {
        const int e = yz_swizzle<L>(r, col);
        *up = uc[e] + cur[e];
      }
    } else {
      // u += x, B loads of u in flight per thread.
      constexpr int B = 8;
      T* up = a.u + p0;
      for (int r = row0; r < R; r += B * RS, up += B * sweep) {
        T uu[B];
#pragma unroll
        for (int q = 0; q < B; ++q)
          if (r + q * RS < R) uu[q] = up[q * sweep];
#pragma unroll
        for (int q = 0; q < B; ++q)
          if (r + q * RS < R) up[q * sweep] = uu[q] + cur[yz_swizzle<L>(r + q * RS, col)];
      }
    }
  }
  cp_async_wait<0>();
}

}  // namespace adi3d::cuda::fused
