#include "io/hdf5_probe.hpp"

#include "io/hdf5_handles.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

namespace adi3d::io {

std::string crash_in_child(const std::function<void()>& look) {
  // No other thread may be inside HDF5 when the child is forked (the child would inherit
  // the library in the middle of a call, and its lock held for good): the lock is held
  // across the fork, and the child, a process of one thread, reads without it.
  h5::Hdf5Lock no_one_else_in_hdf5;
  const pid_t child = ::fork();
  if (child < 0) return "";  // no child to look with: the caller reads as it would have
  if (child == 0) {
    h5::forked_child_needs_no_lock();
    try {
      look();
    } catch (...) {
    }
    // No exit handlers: they belong to the parent (MPI, CUDA, the HDF5 library's own).
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return "";
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = signal == SIGSEGV ? "SIGSEGV" : signal == SIGABRT ? "SIGABRT" : signal == SIGBUS ? "SIGBUS" : nullptr;
    return "a crash (signal " + std::to_string(signal) + (name ? std::string(", ") + name : "") + ")";
  }
  // A memory checker in the child (the sanitizers) exits with a status of its own.
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return "a memory error (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  return "";
}

}  // namespace adi3d::io
