// Snapshot staging on the CUDA backend (cuda_staging.cu): host staging buffers are pinned,
// a staged download brings the same values as download(), the backend's later work waits
// for the copy (the next step may overwrite the field), and the writer thread may wait for
// it.
#include "gpu_test_support.hpp"

#include <cuda_runtime.h>

#include <thread>

namespace adi3d::test {
namespace {

template <class T>
using CudaStaging = CudaTest<T>;
TYPED_TEST_SUITE(CudaStaging, Precisions);

template <class T>
std::vector<T> random_values(std::size_t n) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

TYPED_TEST(CudaStaging, BuffersArePinned) {
  Array<TypeParam> host = this->gpu_->allocate_host_staging(1001);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, host.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
}

TYPED_TEST(CudaStaging, StagedDownloadMatchesDownload) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{999}, std::size_t{1} << 20 | 13}) {
    const std::vector<TypeParam> values = random_values<TypeParam>(n);
    const Array<TypeParam> d = this->to_gpu(values);
    Array<TypeParam> host = this->gpu_->allocate_host_staging(n);
    this->gpu_->start_download(d.data(), host.data(), n)->wait();
    EXPECT_TRUE(std::equal(values.begin(), values.end(), host.data())) << n;
  }
}

// 64 Mi values (256 or 512 MB): the copy takes milliseconds, and a fill queued right after
// it must not reach the staged values.
TYPED_TEST(CudaStaging, LaterWorkIsOrderedAfterTheCopy) {
  const std::size_t n = std::size_t{1} << 26;
  Array<TypeParam> d = this->gpu_->allocate(n);
  this->gpu_->fill(d.data(), TypeParam(3), n);
  Array<TypeParam> host = this->gpu_->allocate_host_staging(n);
  std::unique_ptr<PendingDownload> copy = this->gpu_->start_download(d.data(), host.data(), n);
  this->gpu_->fill(d.data(), TypeParam(-7), n);  // the next step overwrites u
  copy->wait();
  EXPECT_EQ(std::count(host.data(), host.data() + n, TypeParam(3)), static_cast<std::ptrdiff_t>(n));
}

// The writer thread waits for the copy (its current device is set by wait()).
TYPED_TEST(CudaStaging, AnotherThreadWaits) {
  const std::vector<TypeParam> values = random_values<TypeParam>(4097);
  const Array<TypeParam> d = this->to_gpu(values);
  Array<TypeParam> host = this->gpu_->allocate_host_staging(values.size());
  std::shared_ptr<PendingDownload> copy = this->gpu_->start_download(d.data(), host.data(), values.size());
  bool same = false;
  std::thread writer([&] {
    copy->wait();
    same = std::equal(values.begin(), values.end(), host.data());
  });
  writer.join();
  EXPECT_TRUE(same);
}

}  // namespace
}  // namespace adi3d::test
