// Host side of the multi-stage CUDA tridiagonal solver: policy sanitising, stage dispatch
// (paper Fig. 1), stream-ordered workspace, the static guess, the dynamic search and
// policy_for(). The kernels and their byte counts are in tridiag_kernels.cuh (shared-memory
// and global-memory kernels) and tridiag_reg_kernels.cuh (register-resident partition).
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/backend/device_poison.hpp"
#include "solvers/cuda/common/event_timer.cuh"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_kernels.cuh"
#include "solvers/tridiag/tridiag_random.cuh"
#include "solvers/tridiag/tridiag_reg_kernels.cuh"
#include "solvers/tridiag/tuning_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace adi3d::tridiag {

namespace {

using detail::Coeffs;
using detail::OutCoeffs;
using detail::View;

struct DeviceInfo {
  std::string name;
  int sms = 1;
  std::size_t smem_optin = 48 * 1024;
  int regs_per_sm = 65536;
  int max_threads_per_sm = 2048;
};

const DeviceInfo& device_info() {
  static std::mutex mu;
  static std::map<int, DeviceInfo> cache;
  int dev = 0;
  ADI3D_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(dev);
  if (it != cache.end()) return it->second;
  cudaDeviceProp prop{};
  ADI3D_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceInfo info;
  info.name = prop.name;
  info.sms = prop.multiProcessorCount;
  info.smem_optin = prop.sharedMemPerBlockOptin;
  info.regs_per_sm = prop.regsPerMultiprocessor;
  info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  // Workspace is stream-ordered; keep freed pool memory cached so repeated solves do not
  // return it to the driver at every synchronisation.
  cudaMemPool_t pool;
  ADI3D_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = UINT64_MAX;
  ADI3D_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  return cache.emplace(dev, info).first->second;
}

long pow2_floor(long x) {
  long p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

long pow2_ceil(long x) {
  long p = 1;
  while (p < x) p *= 2;
  return p;
}

// Temporary device memory for one solve, allocated and freed in stream order.
class Workspace {
 public:
  explicit Workspace(cudaStream_t st) : st_(st) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    // A destructor cannot throw: the test switch's fill is unchecked here.
    const Poison setting = poison_setting();
    for (const Block& b : blocks_) {
      if (setting != Poison::off) static_cast<void>(cudaMemsetAsync(b.p, poison_byte(setting), b.bytes, st_));
      static_cast<void>(cudaFreeAsync(b.p, st_));
    }
  }
  template <class T>
  T* get(long n) {
    void* p = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(std::max(1L, n)) * sizeof(T);
    ADI3D_CUDA_CHECK(cudaMallocAsync(&p, bytes, st_));
    blocks_.push_back({p, bytes});
    cuda::poison_device(p, bytes, st_);
    return static_cast<T*>(p);
  }

 private:
  struct Block {
    void* p;
    std::size_t bytes;
  };
  cudaStream_t st_;
  std::vector<Block> blocks_;
};

// Rows per thread of the register kernels: 4, 8 or 16 (the instantiated chunks).
int reg_chunk(int k) { return k >= 16 ? 16 : (k >= 8 ? 8 : 4); }

// Calls f(std::integral_constant<int, K>{}) for K = reg_chunk(k).
template <class F>
void with_reg_chunk(int k, F&& f) {
  switch (reg_chunk(k)) {
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
  }
}

template <class T>
bool aligned16(const T* p) {
  return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

unsigned grid_for(long total, int threads, int sms) {
  const long want = (total + threads - 1) / threads;
  return static_cast<unsigned>(std::max(1L, std::min(want, static_cast<long>(sms) * 32)));
}

template <class T>
TridiagPolicy sanitise(TridiagPolicy p, const DeviceInfo& info) {
  p.pcr_thomas_switch = static_cast<int>(pow2_floor(std::clamp(p.pcr_thomas_switch, 1, 1024)));
  if (p.split_chunk <= 0) p.split_chunk = sizeof(T) == 4 ? 32 : 16;  // precision default
  p.split_chunk = std::clamp(p.split_chunk, 4, 128);
  p.base_chunk = std::clamp(p.base_chunk, 4, 64);
  p.block_threads = std::clamp(p.block_threads / 32 * 32, 32, 1024);
  p.stage1_min_systems = std::max(1L, p.stage1_min_systems);
  p.interleaved_thread_min = std::max(1L, p.interleaved_thread_min);
  // One subsystem of the base kernel must fit the opt-in shared memory (6 arrays).
  const long smem_rows =
      static_cast<long>((info.smem_optin - detail::kPcrThomasStaticSmem) / (6 * sizeof(T)));
  p.base_size = std::min(p.base_size, smem_rows);
  // Partition splitting needs chunks of >= 2 rows in every system it cuts; it cuts only
  // systems longer than base_size.
  p.base_size = std::max(p.base_size, 2L * p.split_chunk);
  if (p.base_size > smem_rows) {
    p.split_chunk = static_cast<int>(std::max(4L, smem_rows / 2));
    p.base_size = smem_rows;
  }
  return p;
}

template <class T>
class Solver {
 public:
  Solver(const TridiagPolicy& p, cudaStream_t st)
      : info_(device_info()), pol_(sanitise<T>(p, info_)), st_(st), ws_(st) {}

  void solve_batch(const TridiagBatch<T>& bt) {
    const View v = top_view(bt);
    if (!bt.cyclic) {
      solve(Coeffs<T>{bt.a, bt.b, bt.c, bt.d}, bt.d, v);
      return;
    }
    if (bt.n == 1) {
      detail::k_cyclic_single<<<grid_for(bt.count, 256, info_.sms * 1024), 256, 0, st_>>>(
          Coeffs<T>{bt.a, bt.b, bt.c, bt.d}, bt.d, bt.count);
      ADI3D_CUDA_LAUNCH_CHECK();
      return;
    }
    // Sherman-Morrison around the non-cyclic solver: A = T' + u v^T with T' the matrix
    // without corners and a modified first/last diagonal; two solves with T', then a
    // rank-one correction per system.
    const long total = bt.n * bt.count;
    T* bb = ws_.get<T>(total);
    T* z = ws_.get<T>(total);
    T* f = ws_.get<T>(bt.count);
    const Coeffs<T> orig{bt.a, bt.b, bt.c, bt.d};
    const int th = pol_.block_threads;
    detail::k_cyclic_prepare<<<grid_for(total, th, info_.sms), th, 0, st_>>>(orig, bb, z, v);
    ADI3D_CUDA_LAUNCH_CHECK();
    solve(Coeffs<T>{bt.a, bb, bt.c, bt.d}, bt.d, v);
    solve(Coeffs<T>{bt.a, bb, bt.c, z}, z, v);
    detail::k_cyclic_factor<<<grid_for(bt.count, th, info_.sms * 1024), th, 0, st_>>>(orig, bt.d, z, f, v);
    ADI3D_CUDA_LAUNCH_CHECK();
    detail::k_cyclic_correct<<<grid_for(total, th, info_.sms), th, 0, st_>>>(bt.d, z, f, v);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

 private:
  static View top_view(const TridiagBatch<T>& bt) {
    if (bt.layout == Layout::contiguous || bt.count == 1) return View{bt.count, bt.n, 1, 1, bt.n};
    return View{bt.count, 1, bt.count, 1, bt.n};
  }

  // Elements spanned by a view's parents (the size of a workspace array indexed like it).
  static long extent(const View& v) { return v.J == 1 ? v.parents * v.P : v.L0 * v.J; }

  // Paper Fig. 1: stage 1 while there are too few systems, stage 2 until subsystems fit
  // the base size, then the base kernel. x is indexed like src.
  void solve(Coeffs<T> src, T* x, View v) {
    const long L = v.max_len();
    if (v.J != 1 && v.K == 1 && v.parents >= pol_.interleaved_thread_min) {
      base_thread_thomas(src, x, v);
    } else if (L <= pol_.base_size) {
      base(src, x, v);
    } else if (v.num() >= pol_.stage1_min_systems) {
      stage2(src, x, v, nullptr);
    } else if (pol_.stage1 == Stage1Method::reg_partition && v.K == 1 && v.J == 1) {
      stage1_reg(src, x, v);
    } else if (pol_.stage1 != Stage1Method::pcr && v.K == 1) {
      stage1_partition(src, x, v);
    } else {
      stage1_pcr(src, x, v);
    }
  }

  void stage1_partition(Coeffs<T> src, T* x, View v) {
    const int m = pol_.split_chunk;
    const long n = v.L0, Pc = n / m, nr = 2 * Pc;
    const long ext = extent(v);
    T* alpha = ws_.get<T>(ext);
    T* gamma = ws_.get<T>(ext);
    T* ra = ws_.get<T>(v.parents * nr);
    T* rb = ws_.get<T>(v.parents * nr);
    T* rc = ws_.get<T>(v.parents * nr);
    T* rd = ws_.get<T>(v.parents * nr);
    if (v.J == 1) {
      const int stride = detail::partition_stride(m);
      const std::size_t per_warp = 4 * static_cast<std::size_t>(stride) * sizeof(T);
      const int warps = static_cast<int>(std::clamp<std::size_t>(info_.smem_optin / per_warp, 1, 4));
      const long total_warps = v.parents * ((Pc + 31) / 32);
      const long blocks = (total_warps + warps - 1) / warps;
      const std::size_t smem = per_warp * warps;
      allow_smem(detail::k_partition_reduce<T>, info_.smem_optin);
      detail::k_partition_reduce<T><<<static_cast<unsigned>(blocks), warps * 32, smem, st_>>>(
          src, alpha, gamma, x, ra, rb, rc, rd, v.parents, n, m);
    } else {
      const int th = pol_.block_threads;
      const long total = v.parents * Pc;
      detail::k_partition_reduce_strided<T><<<static_cast<unsigned>((total + th - 1) / th), th, 0, st_>>>(
          src, alpha, gamma, x, ra, rb, rc, rd, v, m);
    }
    ADI3D_CUDA_LAUNCH_CHECK();
    // The interface system: 2 rows per chunk, contiguous, solved by the whole solver.
    solve(Coeffs<T>{ra, rb, rc, rd}, rd, View{v.parents, nr, 1, 1, nr});
    const int th = pol_.block_threads;
    detail::k_partition_substitute<T><<<grid_for(v.parents * n, th, info_.sms), th, 0, st_>>>(
        alpha, gamma, x, rd, x, v, m);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

  // Paper stage 1: grid-wide PCR halvings (one launch each) until there are enough
  // subsystems for stage 2 or they fit the base size.
  void stage1_pcr(Coeffs<T> src, T* x, View v) {
    const long ext = extent(v);
    OutCoeffs<T> buf[2];
    for (auto& b : buf) b = OutCoeffs<T>{ws_.get<T>(ext), ws_.get<T>(ext), ws_.get<T>(ext)};
    int cur = 0;
    const int th = pol_.block_threads;
    while (v.num() < pol_.stage1_min_systems && v.max_len() > pol_.base_size) {
      detail::k_pcr_step_global<T><<<grid_for(v.parents * v.L0, th, info_.sms), th, 0, st_>>>(src, buf[cur], v);
      ADI3D_CUDA_LAUNCH_CHECK();
      src = Coeffs<T>{buf[cur].a, nullptr, buf[cur].c, buf[cur].d};
      cur ^= 1;
      v.K *= 2;
    }
    if (v.max_len() <= pol_.base_size) {
      solve(src, x, v);
    } else {
      stage2(src, x, v, buf);
    }
  }

  // Paper stage 2: one block per subsystem halves it until it fits the base size.
  void stage2(Coeffs<T> src, T* x, View v, OutCoeffs<T>* bufs) {
    int steps = 0;
    while ((v.max_len() + (1L << steps) - 1) / (1L << steps) > pol_.base_size) ++steps;
    OutCoeffs<T> b0, b1;
    const long ext = extent(v);
    if (bufs && src.b == nullptr) {
      // src is one of the stage-1 buffers: ping-pong between the other one and itself.
      b0 = (src.a == bufs[0].a) ? bufs[1] : bufs[0];
      b1 = OutCoeffs<T>{const_cast<T*>(src.a), const_cast<T*>(src.c), const_cast<T*>(src.d)};
    } else {
      b0 = OutCoeffs<T>{ws_.get<T>(ext), ws_.get<T>(ext), ws_.get<T>(ext)};
      b1 = OutCoeffs<T>{ws_.get<T>(ext), ws_.get<T>(ext), ws_.get<T>(ext)};
    }
    detail::k_pcr_split_block<T><<<static_cast<unsigned>(v.num()), 1024, 0, st_>>>(src, b0, b1, v, steps);
    ADI3D_CUDA_LAUNCH_CHECK();
    const OutCoeffs<T> last = (steps % 2 == 1) ? b0 : b1;
    v.K <<= steps;
    base(Coeffs<T>{last.a, nullptr, last.c, last.d}, x, v);
  }

  // The policy's base kernel for subsystems of at most base_size rows.
  void base(Coeffs<T> src, T* x, View v) {
    if (v.K > 1 && pol_.base == BaseKernel::thread_thomas)
      base_thread_thomas(src, x, v);
    else if (pol_.base == BaseKernel::reg_partition)
      base_reg(src, x, v);
    else if (pol_.base == BaseKernel::partition)
      base_partition(src, x, v);
    else
      base_pcr_thomas(src, x, v);
  }

  bool all_aligned(const Coeffs<T>& s, const T* x) const {
    return aligned16(s.a) && aligned16(s.b) && aligned16(s.c) && aligned16(s.d) && aligned16(x);
  }

  // Picks the access mode of a register kernel and launches kernel<ACC> through launch.
  template <class Launch>
  static void by_access(bool warp, bool vec, Launch&& launch) {
    using detail::Access;
    if (warp && vec)
      launch(std::integral_constant<Access, Access::warp_vec>{});
    else if (warp)
      launch(std::integral_constant<Access, Access::warp_scalar>{});
    else
      launch(std::integral_constant<Access, Access::thread>{});
  }

  // Register-resident partition base (k_reg_base): contiguous subsystems (K == J == 1) of at
  // most reg_max_threads * chunk rows; anything else goes to the shared-memory partition base.
  void base_reg(Coeffs<T> src, T* x, View v) {
    if (v.K != 1 || v.J != 1) {
      base_partition(src, x, v);
      return;
    }
    bool done = false;
    with_reg_chunk(pol_.base_chunk, [&](auto kc) {
      constexpr int K = decltype(kc)::value;
      constexpr int maxt = detail::reg_max_threads<T, K>();
      const long L = v.L0, chunks = (L + K - 1) / K;
      // Up to 32 threads per system: a power of two (aligned lane segments, shuffles);
      // beyond: whole warps.
      const long tps = chunks <= 32 ? pow2_ceil(chunks) : (chunks + 31) / 32 * 32;
      if (tps > maxt) return;
      const bool aligned = all_aligned(src, x);
      const bool warp = tps >= 32 || (L == tps * K && v.P == L);
      const bool vec = aligned && v.P % detail::kVecWidth<T> == 0;
      long spb = std::max(1L, std::min<long>(pol_.block_threads, maxt) / tps);
      spb = std::min(spb, v.parents);
      const long threads = (spb * tps + 31) / 32 * 32;
      const long blocks = (v.parents + spb - 1) / spb;
      const std::size_t smem =
          (6 * static_cast<std::size_t>(threads) + (warp ? threads / 32 * detail::warp_buf_words<K>() : 0)) * sizeof(T);
      by_access(warp, vec, [&](auto acc) {
        auto kernel = detail::k_reg_base<T, K, decltype(acc)::value, detail::ArrayRows<T>>;
        if (smem > 48 * 1024) allow_smem(kernel, info_.smem_optin);
        kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), smem, st_>>>(
            detail::ArrayRows<T>{src}, x, v.parents, v.P, L, static_cast<int>(tps), static_cast<int>(spb), vec);
      });
      ADI3D_CUDA_LAUNCH_CHECK();
      done = true;
    });
    if (!done) base_partition(src, x, v);
  }

  // Stage 1 in registers (k_reg_reduce, recursive solve of the separators, k_reg_substitute)
  // for contiguous parents.
  void stage1_reg(Coeffs<T> src, T* x, View v) {
    with_reg_chunk(pol_.split_chunk, [&](auto kc) {
      constexpr int K = decltype(kc)::value;
      const long n = v.L0, Pc = (n + K - 1) / K, nch = v.parents * Pc;
      T* ra = ws_.get<T>(nch);
      T* rb = ws_.get<T>(nch);
      T* rc = ws_.get<T>(nch);
      T* rd = ws_.get<T>(nch);
      // A warp's chunks are contiguous rows when every parent is whole chunks or there is
      // one parent; its first row is then a multiple of K.
      const bool warp = n % K == 0 || v.parents == 1;
      const bool vec = all_aligned(src, x) && (n % detail::kVecWidth<T> == 0 || v.parents == 1);
      const int threads = std::min(detail::reg_max_threads<T, K>(), std::max(32, pol_.block_threads / 32 * 32));
      const unsigned blocks = static_cast<unsigned>((nch + threads - 1) / threads);
      const std::size_t wb = warp ? static_cast<std::size_t>(threads / 32) * detail::warp_buf_words<K>() : 0;
      const std::size_t smem_reduce = (3 * static_cast<std::size_t>(threads) + wb) * sizeof(T);
      const std::size_t smem_subst = std::max<std::size_t>(wb, 1) * sizeof(T);
      by_access(warp, vec, [&](auto acc) {
        auto kernel = detail::k_reg_reduce<T, K, decltype(acc)::value>;
        if (smem_reduce > 48 * 1024) allow_smem(kernel, info_.smem_optin);
        kernel<<<blocks, threads, smem_reduce, st_>>>(src, ra, rb, rc, rd, v.parents, n, Pc, vec);
      });
      ADI3D_CUDA_LAUNCH_CHECK();
      solve(Coeffs<T>{ra, rb, rc, rd}, rd, View{v.parents, Pc, 1, 1, Pc});
      by_access(warp, vec, [&](auto acc) {
        auto kernel = detail::k_reg_substitute<T, K, decltype(acc)::value>;
        if (smem_subst > 48 * 1024) allow_smem(kernel, info_.smem_optin);
        kernel<<<blocks, threads, smem_subst, st_>>>(src, rd, x, v.parents, n, Pc, vec);
      });
      ADI3D_CUDA_LAUNCH_CHECK();
    });
  }

  void base_thread_thomas(Coeffs<T> src, T* x, View v) {
    T* cp = ws_.get<T>(extent(v));
    const int th = pol_.block_threads;
    const long nsub = v.num();
    detail::k_thread_thomas<T><<<static_cast<unsigned>((nsub + th - 1) / th), th, 0, st_>>>(src, x, cp, v);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

  void base_pcr_thomas(Coeffs<T> src, T* x, View v) {
    const long lmax = std::max(1L, v.max_len());
    const int tsw = static_cast<int>(std::min<long>(pol_.pcr_thomas_switch, pow2_ceil(lmax)));
    const std::size_t per_sys = static_cast<std::size_t>(lmax) * 6 * sizeof(T);
    const std::size_t smem_avail = info_.smem_optin - detail::kPcrThomasStaticSmem;
    if (per_sys > smem_avail) throw std::logic_error("tridiag: base subsystem exceeds shared memory");
    // Aim for two resident blocks per SM, and block_threads threads doing the Thomas part.
    long spb = std::max(1, pol_.block_threads / tsw);
    spb = std::min<long>(spb, std::max<std::size_t>(1, (smem_avail / 2) / per_sys));
    spb = std::min<long>(spb, detail::kMaxSpb);
    spb = std::min<long>(spb, std::max(1, 1024 / tsw));
    spb = std::min(spb, v.num());
    const long thomas_threads = spb * tsw;
    const long threads = std::min(1024L, std::max(thomas_threads, (std::min(spb * lmax, 512L) + 31) / 32 * 32));
    const std::size_t smem = per_sys * static_cast<std::size_t>(spb);
    const long blocks = (v.num() + spb - 1) / spb;
    allow_smem(detail::k_pcr_thomas<T>, smem_avail);
    detail::k_pcr_thomas<T><<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), smem, st_>>>(
        src, x, v, tsw, static_cast<int>(lmax), static_cast<int>(spb));
    ADI3D_CUDA_LAUNCH_CHECK();
  }

  // O(n) base: block-level partition (see k_partition_base). Falls back to PCR-Thomas when
  // a subsystem's arrays would not fit the shared memory.
  void base_partition(Coeffs<T> src, T* x, View v) {
    const int lmax = static_cast<int>(std::max(1L, v.max_len()));
    // At most 1024 threads (chunks) per subsystem.
    const int m = std::max(pol_.base_chunk, (lmax + 1023) / 1024);
    const int tps = detail::partition_base_tps<T>(lmax, m);
    const std::size_t per_sys = static_cast<std::size_t>(detail::partition_base_words<T>(lmax, m)) * sizeof(T);
    const std::size_t smem_avail = info_.smem_optin - detail::kPcrThomasStaticSmem;
    if (per_sys > smem_avail) {
      base_pcr_thomas(src, x, v);
      return;
    }
    long spb = std::max(1, pol_.block_threads / tps);
    spb = std::min<long>(spb, std::max<std::size_t>(1, (smem_avail / 2) / per_sys));
    spb = std::min<long>(spb, std::max<std::size_t>(1, smem_avail / per_sys));
    spb = std::min<long>(spb, detail::kMaxSpb);
    spb = std::min<long>(spb, std::max(1, 1024 / tps));
    spb = std::min(spb, v.num());
    const long threads = std::min(1024L, std::max((spb * tps + 31) / 32 * 32, 128L));
    const std::size_t smem = per_sys * static_cast<std::size_t>(spb);
    const long blocks = (v.num() + spb - 1) / spb;
    allow_smem(detail::k_partition_base<T>, smem_avail);
    detail::k_partition_base<T><<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), smem, st_>>>(
        src, x, v, lmax, m, static_cast<int>(spb));
    ADI3D_CUDA_LAUNCH_CHECK();
  }

  template <class K>
  void allow_smem(K kernel, std::size_t bytes) {
    // Once per kernel and device: opt in to the device's full shared memory per block.
    static std::mutex mu;
    static std::map<std::pair<const void*, int>, bool> done;
    int dev = 0;
    ADI3D_CUDA_CHECK(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(mu);
    auto key = std::make_pair(reinterpret_cast<const void*>(kernel), dev);
    if (done.count(key)) return;
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
    done[key] = true;
  }

  const DeviceInfo& info_;
  TridiagPolicy pol_;
  cudaStream_t st_;
  Workspace ws_;
};

template <class T>
const char* precision_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

}  // namespace

bool cuda_compiled() { return true; }

bool cuda_available() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

template <class T>
void solve_cuda(const TridiagBatch<T>& batch, const TridiagPolicy& policy, void* stream) {
  if (batch.n < 1 || batch.count < 0) throw std::invalid_argument("tridiag: n must be >= 1 and count >= 0");
  if (batch.count == 0) return;
  if (!batch.a || !batch.b || !batch.c || !batch.d) throw std::invalid_argument("tridiag: null coefficient pointer");
  Solver<T> solver(policy, static_cast<cudaStream_t>(stream));
  solver.solve_batch(batch);
}

template <class T>
TridiagPolicy static_policy(long n, long count, Layout layout) {
  (void)n;
  (void)count;
  (void)layout;
  const DeviceInfo& info = device_info();
  TridiagPolicy p;
  // PCR-to-Thomas switch: the paper's static guess ties it to the warp size.
  p.pcr_thomas_switch = 32;
  // Stage 1 until every SM has a few stage-2 blocks (paper: 16 on 4-24 SM parts).
  p.stage1_min_systems = 4L * info.sms;
  // Stage 1 and the base kernel in registers (reg_partition): 16 rows per thread for the
  // splitting (a factor 16 per level).
  p.stage1 = Stage1Method::reg_partition;
  p.split_chunk = 16;
  // One thread per interleaved system once a quarter of the resident threads are busy.
  p.interleaved_thread_min = static_cast<long>(info.sms) * info.max_threads_per_sm / 4;
  // 128-thread blocks: the register stage-1 passes of single systems run faster with them
  // (H100: 1x2^24 double 0.51 -> 0.48 ms), the batched base kernel is indifferent.
  p.block_threads = 128;
  p.base = BaseKernel::reg_partition;
  p.base_chunk = 8;
  // Subsystems up to 4096 rows go to the base kernel (the register kernel's limit is 256
  // or 512 threads of base_chunk rows; longer ones fall back to the shared-memory one).
  p.base_size = 4096;
  return sanitise<T>(p, info);
}

template <class T>
TridiagPolicy policy_for(long n, long count, Layout layout) {
  const DeviceInfo& info = device_info();
  if (auto p = tuned_policy(info.name, precision_name<T>())) return sanitise<T>(*p, info);
  return static_policy<T>(n, count, layout);
}

namespace {

// Device arrays for one tuning case, RAII.
template <class T>
struct CaseData {
  TridiagBatch<T> bt{};
  T* d0 = nullptr;
  std::vector<void*> ptrs;
  CaseData(const TuneCase& c, std::uint64_t seed) {
    const long total = c.n * c.count;
    T* arr[5];
    for (T*& p : arr) {
      void* q = nullptr;
      ADI3D_CUDA_CHECK(cudaMalloc(&q, static_cast<std::size_t>(total) * sizeof(T)));
      ptrs.push_back(q);
      p = static_cast<T*>(q);
    }
    detail::fill_random(arr[0], arr[1], arr[2], arr[4], total, seed);
    bt = TridiagBatch<T>{arr[0], arr[1], arr[2], arr[3], c.n, c.count, c.layout, false};
    d0 = arr[4];
  }
  CaseData(const CaseData&) = delete;
  CaseData& operator=(const CaseData&) = delete;
  ~CaseData() {
    for (void* p : ptrs) cudaFree(p);
  }
};

template <class T>
double time_policy(CaseData<T>& cd, const TridiagPolicy& p, int reps) {
  const std::size_t bytes = static_cast<std::size_t>(cd.bt.n * cd.bt.count) * sizeof(T);
  return cuda::EventTimer().median_ms(
      nullptr, 2, reps, [&] { solve_cuda(cd.bt, p, nullptr); },
      [&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(cd.bt.d, cd.d0, bytes, cudaMemcpyDeviceToDevice)); });
}

}  // namespace

template <class T>
TuneResult tune(const std::vector<TuneCase>& cases, bool verbose) {
  if (cases.empty()) throw std::invalid_argument("tridiag::tune: no cases");
  const DeviceInfo& info = device_info();
  std::vector<std::unique_ptr<CaseData<T>>> data;
  for (std::size_t i = 0; i < cases.size(); ++i)
    data.push_back(std::make_unique<CaseData<T>>(cases[i], 1234 + i));
  TuneResult res;
  auto cost = [&](const TridiagPolicy& p) {
    double s = 0;
    for (auto& d : data) s += time_policy(*d, p, 7);
    ++res.candidates;
    return s;
  };
  TridiagPolicy best = static_policy<T>(cases.back().n, cases.back().count, cases.back().layout);
  double best_cost = cost(best);
  res.static_ms = best_cost;
  auto try_values = [&](const char* name, auto setter, const auto& values) {
    for (const auto& val : values) {
      TridiagPolicy cand = best;
      setter(cand, val);
      cand = sanitise<T>(cand, info);
      const double c = cost(cand);
      if (verbose) std::fprintf(stderr, "tune %s: %s -> %.4f ms\n", name, to_string(cand).c_str(), c);
      if (c < best_cost * 0.98) {  // keep only gains above the timing spread
        best_cost = c;
        best = cand;
      }
    }
  };
  // Decoupled order (paper §IV-D): base-kernel parameters first, then the splitting ones.
  try_values("pcr_thomas_switch", [](TridiagPolicy& p, int v) { p.pcr_thomas_switch = v; },
             std::vector<int>{4, 8, 16, 32, 64, 128});
  std::vector<long> bases;
  for (long b = 256; b * 6 * static_cast<long>(sizeof(T)) <= static_cast<long>(info.smem_optin); b *= 2) bases.push_back(b);
  try_values("base_size", [](TridiagPolicy& p, long v) { p.base_size = v; }, bases);
  try_values("base", [](TridiagPolicy& p, BaseKernel v) { p.base = v; },
             std::vector<BaseKernel>{BaseKernel::reg_partition, BaseKernel::partition, BaseKernel::pcr_thomas,
                                     BaseKernel::thread_thomas});
  if (best.base == BaseKernel::reg_partition)
    try_values("base_chunk", [](TridiagPolicy& p, int v) { p.base_chunk = v; }, std::vector<int>{4, 8, 16});
  else if (best.base == BaseKernel::partition)
    try_values("base_chunk", [](TridiagPolicy& p, int v) { p.base_chunk = v; }, std::vector<int>{4, 8, 16, 32});
  try_values("stage1", [](TridiagPolicy& p, Stage1Method v) { p.stage1 = v; },
             std::vector<Stage1Method>{Stage1Method::reg_partition, Stage1Method::partition, Stage1Method::pcr});
  try_values("split_chunk", [](TridiagPolicy& p, int v) { p.split_chunk = v; },
             best.stage1 == Stage1Method::reg_partition ? std::vector<int>{4, 8, 16} : std::vector<int>{8, 16, 32, 64});
  const long sms = info.sms;
  try_values("stage1_min_systems", [](TridiagPolicy& p, long v) { p.stage1_min_systems = v; },
             std::vector<long>{sms / 2, sms, 2 * sms, 4 * sms, 8 * sms, 32 * sms});
  try_values("block_threads", [](TridiagPolicy& p, int v) { p.block_threads = v; }, std::vector<int>{128, 256, 512});
  res.policy = best;
  res.best_ms = best_cost;
  return res;
}

ADI3D_TRIDIAG_INSTANTIATE_CUDA(float)
ADI3D_TRIDIAG_INSTANTIATE_CUDA(double)

}  // namespace adi3d::tridiag
