#include "io/snapshot_queue.hpp"

namespace adi3d::io {

WriterQueue::WriterQueue(std::size_t depth, bool on_a_thread) : depth_(depth == 0 ? 1 : depth) {
  if (on_a_thread) thread_ = std::thread([this] { run(); });
}

WriterQueue::~WriterQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WriterQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ and nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    const bool failed = static_cast<bool>(error_);
    lock.unlock();
    changed_.notify_all();  // a slot is free: a waiting push() may go on while this job runs
    std::exception_ptr error;
    if (!failed) {
      try {
        job();
      } catch (...) {
        error = std::current_exception();
      }
    }
    job = nullptr;  // free the job's buffers before taking the next one
    lock.lock();
    busy_ = false;
    if (error && !error_) error_ = error;
    changed_.notify_all();
  }
}

void WriterQueue::rethrow_locked(std::unique_lock<std::mutex>&) {
  if (error_) std::rethrow_exception(error_);
}

void WriterQueue::check() {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_locked(lock);
}

void WriterQueue::push(std::function<void()> job, const std::function<void()>& before_waiting) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable()) {  // no writer thread: the job runs here, now
    rethrow_locked(lock);
    lock.unlock();
    try {
      job();
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
    }
    return;
  }
  const auto ready = [this] { return error_ || jobs_.size() < depth_; };
  if (!ready()) {
    if (before_waiting) before_waiting();
    const auto start = std::chrono::steady_clock::now();
    changed_.wait(lock, ready);
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  rethrow_locked(lock);
  jobs_.push_back(std::move(job));
  changed_.notify_all();
}

double WriterQueue::waited_seconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  return waited_;
}

void WriterQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return jobs_.empty() && !busy_; });
  rethrow_locked(lock);
}

bool WriterQueue::drain_for(std::chrono::duration<double> limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, limit, [this] { return jobs_.empty() && !busy_; })) return false;
  rethrow_locked(lock);
  return true;
}

}  // namespace adi3d::io
