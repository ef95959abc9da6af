#pragma once
// A single background writer thread fed by a bounded queue of jobs, so that writing
// snapshots and checkpoints overlaps the time stepping.
//
// How it is used (app/snapshot_pipeline.cpp): at a snapshot the main thread downloads the
// field into a host buffer it owns (the only synchronous part), moves the buffer into a
// job and push()es it; the writer thread runs jobs one at a time, in order, while the
// next steps run. The queue holds at most `depth` jobs: a push() into a full queue waits,
// which bounds host memory to depth + 1 snapshots when the disk is slower than the
// solver. The first job that throws stops the writer (later jobs are dropped, so nothing
// is written after a failure); its exception is stored and rethrown on the main thread by
// the next push() or check(), or by drain() at the end of the run.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace adi3d::io {

class WriterQueue {
 public:
  // Without a thread (on_a_thread false: where MPI allows only the main thread to call it
  // and the jobs write through MPI-IO) push() runs each job at once.
  explicit WriterQueue(std::size_t depth = 2, bool on_a_thread = true);
  // Finishes the queued jobs (errors are then dropped: call drain() to see them).
  ~WriterQueue();
  WriterQueue(const WriterQueue&) = delete;
  WriterQueue& operator=(const WriterQueue&) = delete;

  // Rethrows a stored failure, then queues the job (waiting while the queue is full;
  // `before_waiting`, when given, runs just before such a wait).
  void push(std::function<void()> job, const std::function<void()>& before_waiting = nullptr);
  // Rethrows a stored failure of an earlier job.
  void check();
  // Waits until every queued job has run, then rethrows a stored failure.
  void drain();
  // drain() for at most `limit`: false when jobs were still queued or running then (a
  // collective write whose other ranks are gone never ends).
  bool drain_for(std::chrono::duration<double> limit);

  std::size_t depth() const { return depth_; }
  // Seconds push() waited for a free slot, in all.
  double waited_seconds();

 private:
  void run();
  void rethrow_locked(std::unique_lock<std::mutex>& lock);

  std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false, stop_ = false;
  double waited_ = 0;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace adi3d::io
