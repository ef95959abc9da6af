#include "app/stop_signals.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace adi3d::app {
namespace {

// Written by the handler, read by the run loop. A lock-free atomic is signal-safe (C++17
// [support.signal]), and its compare-exchange tells a second signal from the first even
// when two threads of the process (OpenMP, the writer) take one each at the same moment.
std::atomic<int> first_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  int none = 0;
  if (first_signal.compare_exchange_strong(none, signal)) return;
  // Only async-signal-safe calls here: write(2) and _exit(2). The checkpoint being written,
  // if any, is a temporary file; the previous one stays in place.
  static const char kLine[] = "adi3d: second signal: exiting now; the last complete checkpoint is kept\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kLine, sizeof kLine - 1);
  (void)ignored;
  ::_exit(128 + signal);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: the writer thread's write(2) and fsync(2) calls go on rather than fail
  // with EINTR when the signal lands on that thread.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal() { return first_signal.load(std::memory_order_relaxed); }

int exit_code_for(int signal) { return 128 + signal; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

}  // namespace adi3d::app
