// solve_cuda against solve_cpu on every stage path of the multi-stage solver: the
// PCR-Thomas and one-thread-per-system base kernels, stage 1 by partition and by global PCR,
// stage 2 per-system PCR, cyclic systems; policies force small base sizes so every split
// runs on modest sizes. Each test skips when no CUDA device is visible.
#include "tridiag_test_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace {

using adi3d::test::HostBatch;
using adi3d::tridiag::BaseKernel;
using adi3d::tridiag::Layout;
using adi3d::tridiag::Stage1Method;
using adi3d::tridiag::TridiagPolicy;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Device copy of a host vector, starting `offset` elements into the allocation (offset 1:
// pointers that are not 16-byte aligned, which the vectorised paths must detect).
template <class T>
struct DeviceVec {
  T* base = nullptr;
  T* p = nullptr;
  DeviceVec(const std::vector<T>& h, long offset) {
    check(cudaMalloc(&base, (h.size() + static_cast<std::size_t>(offset)) * sizeof(T)), "cudaMalloc");
    p = base + offset;
    check(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  DeviceVec(const DeviceVec&) = delete;
  DeviceVec& operator=(const DeviceVec&) = delete;
  ~DeviceVec() { cudaFree(base); }
};

template <class T>
class TridiagCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!adi3d::tridiag::cuda_available()) GTEST_SKIP() << "no CUDA device";
  }
  void TearDown() override {
    if (adi3d::tridiag::cuda_available()) {
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }

  void compare(long n, long count, Layout layout, bool cyclic, const TridiagPolicy& pol, unsigned seed,
               long offset = 0) {
    HostBatch<T> hb(n, count, layout, cyclic, seed);
    DeviceVec<T> a(hb.a, offset), b(hb.b, offset), c(hb.c, offset), d(hb.d, offset);
    adi3d::tridiag::TridiagBatch<T> dev{a.p, b.p, c.p, d.p, n, count, layout, cyclic};
    adi3d::tridiag::solve_cuda(dev, pol, nullptr);
    std::vector<T> x(hb.d.size());
    check(cudaMemcpy(x.data(), d.p, x.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    adi3d::tridiag::solve_cpu(hb.view());
    double err = 0, nrm = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(std::isfinite(static_cast<double>(x[i]))) << "element " << i;
      err = std::max(err, std::fabs(static_cast<double>(x[i]) - hb.d[i]));
      nrm = std::max(nrm, std::fabs(static_cast<double>(hb.d[i])));
    }
    const double tol = sizeof(T) == 4 ? 2e-4 : 1e-11;
    EXPECT_LE(err, tol * std::max(1.0, nrm)) << "n=" << n << " count=" << count << " layout="
                                            << static_cast<int>(layout) << " cyclic=" << cyclic << " offset="
                                            << offset << " policy " << adi3d::tridiag::to_string(pol);
  }
};

using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TridiagCuda, ValueTypes);

TYPED_TEST(TridiagCuda, BasePcrThomasAllSwitches) {
  unsigned seed = 10;
  for (int tsw : {1, 4, 32, 128}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.pcr_thomas_switch = tsw;
    for (long n : {1L, 2L, 3L, 5L, 33L, 100L, 257L, 1000L})
      for (long count : {1L, 7L, 300L}) this->compare(n, count, Layout::contiguous, false, p, seed++);
  }
}

// The O(n) block-level partition base kernel against the CPU solver: chunk sizes, lengths
// (powers of two and not, shorter than one chunk, 1 and 2 rows), several systems per block.
TYPED_TEST(TridiagCuda, BasePartitionChunks) {
  unsigned seed = 50;
  for (int chunk : {4, 8, 16, 32}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.base = BaseKernel::partition;
    p.base_chunk = chunk;
    for (long n : {1L, 2L, 3L, 5L, 31L, 64L, 100L, 257L, 512L, 1000L, 2048L, 3001L})
      for (long count : {1L, 7L, 130L}) this->compare(n, count, Layout::contiguous, false, p, seed++);
  }
  TridiagPolicy p = adi3d::tridiag::default_policy();
  p.base = BaseKernel::partition;
  p.interleaved_thread_min = 1L << 40;
  for (long n : {3L, 17L, 200L, 1500L})
    for (long count : {2L, 33L}) this->compare(n, count, Layout::interleaved, false, p, seed++);
}

// The register-resident partition base kernel: every chunk, lengths that fill the threads
// exactly (the warp-transposed path: 4, 16, 64, 512, 2048, 4096) and that do not (per-thread
// loads, identity padding), 1-3 rows, one and many systems per block, shuffle (<= 32
// threads per system) and shared-memory reduced solves, unaligned pointers, and lengths
// past the kernel's limit (the shared-memory partition fallback).
TYPED_TEST(TridiagCuda, BaseRegPartitionChunks) {
  unsigned seed = 900;
  for (int chunk : {4, 8, 16}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.base = BaseKernel::reg_partition;
    p.base_chunk = chunk;
    p.base_size = 4096;
    for (long n : {1L, 2L, 3L, 4L, 5L, 16L, 31L, 64L, 100L, 257L, 512L, 1000L, 2048L, 3001L, 4096L})
      for (long count : {1L, 7L, 130L}) {
        this->compare(n, count, Layout::contiguous, false, p, seed++);
        if (count == 7) this->compare(n, count, Layout::contiguous, false, p, seed++, 1);
      }
    for (int threads : {32, 1024}) {
      TridiagPolicy q = p;
      q.block_threads = threads;
      for (long n : {8L, 64L, 777L, 2048L}) this->compare(n, 37, Layout::contiguous, false, q, seed++);
    }
  }
  TridiagPolicy p = adi3d::tridiag::default_policy();
  p.base = BaseKernel::reg_partition;
  p.interleaved_thread_min = 1L << 40;
  for (long n : {3L, 200L})
    for (long count : {2L, 33L}) this->compare(n, count, Layout::interleaved, false, p, seed++);
}

// Stage 1 in registers: several levels (small base size), lengths that are and are not
// multiples of the chunk, every chunk, both register and shared-memory base kernels,
// unaligned pointers, interleaved batches (the shared-memory partition fallback), cyclic.
TYPED_TEST(TridiagCuda, Stage1RegPartition) {
  unsigned seed = 1200;
  for (int chunk : {4, 8, 16})
    for (BaseKernel base : {BaseKernel::reg_partition, BaseKernel::partition}) {
      TridiagPolicy p = adi3d::tridiag::default_policy();
      p.stage1 = Stage1Method::reg_partition;
      p.split_chunk = chunk;
      p.base = base;
      p.base_size = 64;
      p.stage1_min_systems = 1L << 40;
      for (long n : {65L, 1000L, 4096L, 5001L, 100003L})
        for (long count : {1L, 3L}) {
          this->compare(n, count, Layout::contiguous, false, p, seed++);
          if (base == BaseKernel::reg_partition) {
            this->compare(n, count, Layout::contiguous, false, p, seed++, 1);
            this->compare(n, count, Layout::interleaved, false, p, seed++);
            this->compare(n, count, Layout::contiguous, true, p, seed++);
          }
        }
    }
  TridiagPolicy p = adi3d::tridiag::default_policy();
  p.stage1 = Stage1Method::reg_partition;
  p.base = BaseKernel::reg_partition;
  p.split_chunk = 16;
  p.base_size = 4096;
  p.stage1_min_systems = 1L << 40;
  for (int threads : {32, 512}) {
    p.block_threads = threads;
    this->compare((1L << 20) + 7, 1, Layout::contiguous, false, p, seed++);
    this->compare(1L << 20, 2, Layout::contiguous, true, p, seed++);
  }
}

// The partition base under stage 1 and stage 2 (strided subsystems) and for cyclic systems.
TYPED_TEST(TridiagCuda, BasePartitionAfterSplitting) {
  unsigned seed = 700;
  TridiagPolicy part = adi3d::tridiag::default_policy();
  part.base = BaseKernel::partition;
  part.base_size = 128;
  part.split_chunk = 8;
  part.stage1_min_systems = 1L << 40;
  TridiagPolicy pcr = part;
  pcr.stage1 = Stage1Method::pcr;
  pcr.stage1_min_systems = 4;
  TridiagPolicy st2 = part;
  st2.stage1_min_systems = 1;
  st2.interleaved_thread_min = 1L << 40;
  for (const TridiagPolicy& p : {part, pcr, st2})
    for (long n : {129L, 1000L, 5001L, 70001L})
      for (long count : {1L, 3L}) {
        this->compare(n, count, Layout::contiguous, false, p, seed++);
        this->compare(n, count, Layout::interleaved, false, p, seed++);
        this->compare(n, count, Layout::contiguous, true, p, seed++);
      }
}

TYPED_TEST(TridiagCuda, InterleavedThreadAndPcrThomas) {
  unsigned seed = 100;
  TridiagPolicy thread = adi3d::tridiag::default_policy();
  thread.interleaved_thread_min = 1;
  TridiagPolicy smem = adi3d::tridiag::default_policy();
  smem.interleaved_thread_min = 1L << 40;
  for (long n : {1L, 2L, 3L, 17L, 200L})
    for (long count : {2L, 33L, 513L}) {
      this->compare(n, count, Layout::interleaved, false, thread, seed++);
      this->compare(n, count, Layout::interleaved, false, smem, seed++);
    }
}

TYPED_TEST(TridiagCuda, Stage1Partition) {
  unsigned seed = 200;
  for (int chunk : {4, 8, 32}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.stage1 = Stage1Method::partition;
    p.base_size = 64;
    p.split_chunk = chunk;
    p.stage1_min_systems = 1L << 40;
    for (long n : {65L, 1000L, 5001L, 100003L})
      for (long count : {1L, 3L}) {
        this->compare(n, count, Layout::contiguous, false, p, seed++);
        this->compare(n, count, Layout::interleaved, false, p, seed++);
      }
  }
}

TYPED_TEST(TridiagCuda, Stage1PcrThenStage2) {
  unsigned seed = 300;
  for (BaseKernel base : {BaseKernel::pcr_thomas, BaseKernel::thread_thomas}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.stage1 = Stage1Method::pcr;
    p.base_size = 64;
    p.stage1_min_systems = 8;
    p.base = base;
    for (long n : {65L, 3001L, 20000L})
      for (long count : {1L, 2L}) {
        this->compare(n, count, Layout::contiguous, false, p, seed++);
        this->compare(n, count, Layout::interleaved, false, p, seed++);
      }
  }
}

TYPED_TEST(TridiagCuda, Stage2PerSystemPcr) {
  unsigned seed = 400;
  for (BaseKernel base : {BaseKernel::pcr_thomas, BaseKernel::thread_thomas}) {
    TridiagPolicy p = adi3d::tridiag::default_policy();
    p.base_size = 64;
    p.stage1_min_systems = 1;
    p.base = base;
    p.interleaved_thread_min = 1L << 40;
    for (long n : {65L, 1000L, 4099L})
      for (long count : {1L, 5L}) {
        this->compare(n, count, Layout::contiguous, false, p, seed++);
        this->compare(n, count, Layout::interleaved, false, p, seed++);
      }
  }
}

TYPED_TEST(TridiagCuda, CyclicEveryPath) {
  unsigned seed = 500;
  TridiagPolicy base = adi3d::tridiag::default_policy();
  TridiagPolicy part = base;
  part.base_size = 64;
  part.split_chunk = 8;
  part.stage1_min_systems = 1L << 40;
  TridiagPolicy pcr = part;
  pcr.stage1 = Stage1Method::pcr;
  pcr.stage1_min_systems = 4;
  TridiagPolicy reg = part;
  reg.stage1 = Stage1Method::reg_partition;
  reg.base = BaseKernel::reg_partition;
  for (const TridiagPolicy& p : {base, part, pcr, reg})
    for (long n : {1L, 2L, 3L, 10L, 777L, 3000L})
      for (long count : {1L, 9L}) {
        this->compare(n, count, Layout::contiguous, true, p, seed++);
        this->compare(n, count, Layout::interleaved, true, p, seed++);
      }
}

TYPED_TEST(TridiagCuda, StaticAndDefaultPoliciesLargeSystem) {
  unsigned seed = 600;
  const TridiagPolicy s = adi3d::tridiag::static_policy<TypeParam>(1 << 20, 1, Layout::contiguous);
  this->compare(1 << 20, 1, Layout::contiguous, false, s, seed++);
  this->compare((1 << 20) + 3, 1, Layout::contiguous, false, adi3d::tridiag::default_policy(), seed++);
  this->compare(4097, 40, Layout::contiguous, false, s, seed++);
  this->compare(300, 5000, Layout::interleaved, false, s, seed++);
  this->compare(70000, 3, Layout::interleaved, true, s, seed++);
  this->compare(4096, 64, Layout::contiguous, false, s, seed++);
  this->compare(512, 2000, Layout::contiguous, false, s, seed++);
  this->compare(3000, 50, Layout::contiguous, false, s, seed++);
}

TEST(TridiagPolicyDefaults, SplitChunkByPrecision) {
  EXPECT_EQ(adi3d::tridiag::default_policy().split_chunk, 0);  // 0: the precision's default
  if (!adi3d::tridiag::cuda_available()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(adi3d::tridiag::static_policy<double>(1 << 24, 1, Layout::contiguous).split_chunk, 16);
  EXPECT_EQ(adi3d::tridiag::static_policy<float>(1 << 24, 1, Layout::contiguous).split_chunk, 16);
}

}  // namespace
