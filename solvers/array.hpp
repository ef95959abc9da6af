#pragma once
// Memory owned by a backend (host memory for the CPU backend, device memory for CUDA).
// Move-only; the backend that made it frees it. Host copies go through the backend's
// upload/download, so every transfer is visible in the algorithm code.
#include <cstddef>
#include <memory>

namespace adi3d {

template <class T>
class Array {
 public:
  using Deleter = void (*)(T*);
  Array() : ptr_(nullptr, &no_delete) {}
  Array(T* data, std::size_t size, Deleter deleter) : ptr_(data, deleter), size_(size) {}

  T* data() { return ptr_.get(); }
  const T* data() const { return ptr_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  static void no_delete(T*) {}
  std::unique_ptr<T, Deleter> ptr_;
  std::size_t size_ = 0;
};

}  // namespace adi3d
