#pragma once
// Asynchronous copies between global and shared memory for the CUDA backend's kernels:
// cp.async (sm_80+), and the bulk copies of sm_90 (one instruction moves a whole row; a
// load completes on an mbarrier, a store in a bulk group). The sm_90 operations trap when
// built for an older architecture: the host selects their kernels only where
// bulk_copies_usable says so.
#include "solvers/env_switch.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace adi3d::cuda {

// ---------------------------------------------------------------------------------------
// cp.async: global -> shared without registers; src_bytes = 0 zero-fills.
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
// mbarriers (8 bytes of shared memory each) and bulk copies (sm_90).
// Whether a kernel that uses them runs as written on this device: compute capability 9.0
// or newer, and the kernel's code compiled for sm_90 or newer (built for an older target
// only, e.g. PTX of compute_80 compiled for an H100 when the program starts, it holds the
// traps below instead).
// ADI3D_BULK_COPIES=off runs the paths without bulk copies (those of devices before
// sm_90) on any device: compute-sanitizer's initcheck does not follow what bulk copies
// write (scripts/gpu-check runs it so), and the two paths can be compared on one device.
inline bool bulk_copies_switched_off() {
  static const bool off = env_switched_off("ADI3D_BULK_COPIES");
  return off;
}
// The answer is kept per (kernel, device): the attribute query cost about 60 us per
// launch of the planes stencil (256^3 float: 0.122 against 0.065 ms, host-bound).
inline bool bulk_copies_usable(const void* kernel, int device) {
  if (bulk_copies_switched_off()) return false;
  struct Known {
    const void* kernel;
    int device;
    bool usable;
  };
  static std::mutex mutex;
  static std::vector<Known> known;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const Known& k : known)
    if (k.kernel == kernel && k.device == device) return k.usable;
  bool usable = false;
  int major = 0;
  cudaFuncAttributes a{};
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9) {
    if (cudaFuncGetAttributes(&a, kernel) == cudaSuccess)
      usable = a.ptxVersion >= 90 && a.binaryVersion >= 90;
    else
      (void)cudaGetLastError();  // no image of this kernel for the device: not usable
  }
  known.push_back({kernel, device, usable});
  return usable;
}

// Bulk copies move whole 16-byte units between 16-byte aligned addresses.
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define ADI3D_SM90_ASM(...) __trap()
#else
#define ADI3D_SM90_ASM(...) asm volatile(__VA_ARGS__)
#endif

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// count arrivals complete a phase (plus the bytes announced by arrive_expect_tx).
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
  ADI3D_SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
// After the inits, before any thread or bulk copy uses the barriers (then a block barrier).
__device__ __forceinline__ void mbarrier_init_fence() {
  ADI3D_SM90_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
  ADI3D_SM90_ASM("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
// One arrival that also announces the bytes that bulk loads will deliver to this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  ADI3D_SM90_ASM("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
                 "r"(bytes)
                 : "memory");
}
// Waits until the phase of this parity (0 for the first, 1 for the second, ...) completes.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  ADI3D_SM90_ASM(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}

// Global -> shared, bytes a multiple of 16, both addresses 16-byte aligned; completes on bar.
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, unsigned bytes, unsigned long long* bar) {
  ADI3D_SM90_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_address(smem)),
                 "l"(gmem), "r"(bytes), "r"(smem_address(bar))
                 : "memory");
}
// Shared -> global, same rules; joins this thread's open bulk group.
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, unsigned bytes) {
  ADI3D_SM90_ASM("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gmem), "r"(smem_address(smem)),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { ADI3D_SM90_ASM("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until this thread's bulk stores have read their shared memory (it may be written again).
__device__ __forceinline__ void bulk_wait_read() {
  ADI3D_SM90_ASM("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Until they are complete (visible in global memory): before a kernel's threads exit.
__device__ __forceinline__ void bulk_wait() { ADI3D_SM90_ASM("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Until all but this thread's N most recent bulk groups are complete.
template <int N>
__device__ __forceinline__ void bulk_wait_older() {
  ADI3D_SM90_ASM("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's completed bulk stores (the async proxy) before its later ordinary
// accesses to global memory, such as a release that tells other blocks the data is there.
__device__ __forceinline__ void fence_proxy_async_global() {
  ADI3D_SM90_ASM("fence.proxy.async.global;\n" ::: "memory");
}
// Before the shared memory of an mbarrier is used for anything else.
__device__ __forceinline__ void mbarrier_inval(unsigned long long* bar) {
  ADI3D_SM90_ASM("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
// Orders this thread's ordinary shared-memory writes before later bulk copies (the async
// proxy) that read or overwrite them.
__device__ __forceinline__ void fence_proxy_async() {
  ADI3D_SM90_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}

#undef ADI3D_SM90_ASM

}  // namespace adi3d::cuda
