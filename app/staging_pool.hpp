#pragma once
// A bounded pool of host buffers that snapshots are downloaded into and written from.
//
// Each buffer holds one field (values_per_buffer values of the run's precision) and is
// made by the backend (pinned memory on CUDA: allocate_host_staging), at most `capacity`
// of them, on first need; afterwards they are reused, so a run pays for page-locking and
// page faults once. A buffer goes back to the pool when the writer has written it (the
// last copy of its shared_ptr goes, on whichever thread). When every buffer is in use,
// acquire() waits for the writer to give one back: that wait is stepping waiting for the
// writer, and it is what bounds host memory to capacity x values_per_buffer x sizeof(T).
#include "solvers/backend.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

namespace adi3d::app {

template <class T>
class StagingPool {
 public:
  StagingPool(std::size_t values_per_buffer, std::size_t capacity)
      : state_(std::make_shared<State>()), values_(values_per_buffer), capacity_(capacity == 0 ? 1 : capacity) {}

  // A buffer of values_per_buffer values (contents undefined), returned to the pool when
  // the last copy of the pointer goes.
  std::shared_ptr<T> acquire(Backend<T>& backend) {
    return acquire(backend, [] {});
  }
  // `before_waiting` runs (on this thread) just before acquire() starts to wait.
  template <class OnWait>
  std::shared_ptr<T> acquire(Backend<T>& backend, OnWait before_waiting) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    if (state_->free.empty() && state_->buffers.size() < capacity_) {
      lock.unlock();  // allocating (page-locking) gigabytes takes a while: not under the lock
      Array<T> made = allocate(backend);
      lock.lock();
      state_->free.push_back(made.data());
      state_->buffers.push_back(std::move(made));
    }
    if (state_->free.empty()) {
      before_waiting();
      ++state_->waits;  // counted as it begins: the writer may look while stepping waits
      const auto start = std::chrono::steady_clock::now();
      state_->returned.wait(lock, [this] { return !state_->free.empty(); });
      state_->waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    T* p = state_->free.back();
    state_->free.pop_back();
    const std::size_t in_use = state_->buffers.size() - state_->free.size();
    if (in_use > state_->peak) state_->peak = in_use;
    std::shared_ptr<State> state = state_;
    return std::shared_ptr<T>(p, [state, bytes = values_ * sizeof(T)](T* q) {
      poison_host(q, bytes);  // test switch: a reused buffer must be filled again before it is read
      {
        std::lock_guard<std::mutex> guard(state->mutex);
        state->free.push_back(q);
      }
      state->returned.notify_all();
    });
  }

  std::size_t values_per_buffer() const { return values_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t bytes_bound() const { return capacity_ * values_ * sizeof(T); }
  // Buffers made so far (never more than capacity()), and the most in use at once.
  std::size_t allocated() const { return locked([](const State& s) { return s.buffers.size(); }); }
  std::size_t peak_in_use() const { return locked([](const State& s) { return s.peak; }); }
  // How often acquire() waited for the writer (a wait counts from its start), and how
  // long in all (waits that ended).
  long waits() const { return locked([](const State& s) { return s.waits; }); }
  double waited_seconds() const { return locked([](const State& s) { return s.waited; }); }

 private:
  Array<T> allocate(Backend<T>& backend) {
    try {
      return backend.allocate_host_staging(values_);
    } catch (const std::exception& e) {
      // Pinned memory can run out before host memory does: ordinary memory still works
      // (the download is then synchronous and slower).
      spdlog::warn("output: no pinned host buffer for snapshots ({}); using ordinary memory", e.what());
      return backend.Backend<T>::allocate_host_staging(values_);
    }
  }

  // Shared with the buffers' deleters, which may run on the writer thread after the pool
  // object is gone (the memory goes with the last of them).
  struct State {
    std::mutex mutex;
    std::condition_variable returned;
    std::vector<Array<T>> buffers;
    std::vector<T*> free;
    std::size_t peak = 0;
    long waits = 0;
    double waited = 0;
  };
  template <class F>
  auto locked(F f) const {
    std::lock_guard<std::mutex> guard(state_->mutex);
    return f(*state_);
  }

  std::shared_ptr<State> state_;
  std::size_t values_, capacity_;
};

}  // namespace adi3d::app
