// Snapshot downloads: pinned (page-locked) host buffers, and device-to-host copies into
// them that the host does not wait for. A pinned buffer takes the copy at the link's speed
// by DMA (a pageable one is staged by the driver through its own bounce buffer, and its
// pages are faulted in on first touch); the copy is queued on the backend's stream, so the
// next step's kernels are ordered after it (they may overwrite u) while the host goes on,
// and the snapshot writer waits for the copy's event on its own thread.
//
// The copy shares the backend's stream rather than a copy stream of its own: a copy stream
// would let the GPU step on only if the field were first copied to a second device buffer
// (one more field of device memory, which a large run does not have to spare); with one
// buffer the step must wait for the copy either way.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/poison.hpp"

#include <cuda_runtime.h>

namespace adi3d::cuda {
namespace {

template <class T>
void free_pinned(T* p) {
  // A destructor cannot throw; a failing cudaFreeHost means the context is already gone.
  if (p) static_cast<void>(cudaFreeHost(p));
}

// The end of one download: an event recorded on the stream after the copy.
class CudaPendingDownload final : public PendingDownload {
 public:
  CudaPendingDownload(int device, cudaStream_t stream) : device_(device) {
    ADI3D_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    ADI3D_CUDA_CHECK(cudaEventRecord(done_, stream));
  }
  ~CudaPendingDownload() override {
    // Never free the event (and let the buffer go back to the pool) under a running copy.
    static_cast<void>(cudaSetDevice(device_));
    static_cast<void>(cudaEventSynchronize(done_));
    static_cast<void>(cudaEventDestroy(done_));
  }
  CudaPendingDownload(const CudaPendingDownload&) = delete;
  CudaPendingDownload& operator=(const CudaPendingDownload&) = delete;

  void wait() override {
    // The writer thread's current device is not the backend's unless set here.
    ADI3D_CUDA_CHECK(cudaSetDevice(device_));
    ADI3D_CUDA_CHECK(cudaEventSynchronize(done_));
  }

 private:
  int device_;
  cudaEvent_t done_ = nullptr;
};

}  // namespace

template <class T>
Array<T> CudaBackend<T>::allocate_host_staging(std::size_t n) {
  if (n == 0) return Array<T>();
  activate();
  void* p = nullptr;
  ADI3D_CUDA_CHECK(cudaHostAlloc(&p, n * sizeof(T), cudaHostAllocDefault));
  poison_host(p, n * sizeof(T));
  return Array<T>(static_cast<T*>(p), n, &free_pinned<T>);
}

template <class T>
std::unique_ptr<PendingDownload> CudaBackend<T>::start_download(const T* src, T* host, std::size_t n) {
  activate();
  if (n > 0) ADI3D_CUDA_CHECK(cudaMemcpyAsync(host, src, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  return std::make_unique<CudaPendingDownload>(device_, stream_);
}

// The class is instantiated in cuda_backend.cu; these two members are defined here.
template Array<float> CudaBackend<float>::allocate_host_staging(std::size_t);
template Array<double> CudaBackend<double>::allocate_host_staging(std::size_t);
template std::unique_ptr<PendingDownload> CudaBackend<float>::start_download(const float*, float*, std::size_t);
template std::unique_ptr<PendingDownload> CudaBackend<double>::start_download(const double*, double*, std::size_t);

}  // namespace adi3d::cuda
