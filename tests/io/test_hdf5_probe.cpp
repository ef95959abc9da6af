// The first look at a user's HDF5 file in a child process (io/hdf5_probe.hpp): a crash
// there is reported, whatever else happens there is left to the caller's own read.
#include "io/hdf5_probe.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>

namespace adi3d::test {
namespace {

TEST(CrashInChild, ACleanLookOrAnErrorIsNoCrash) {
  EXPECT_EQ(io::crash_in_child([] {}), "");
  EXPECT_EQ(io::crash_in_child([] { throw std::runtime_error("bad file"); }), "");
}

TEST(CrashInChild, ASignalOrAMemoryCheckersExitIsReported) {
  const std::string crash = io::crash_in_child([] { std::raise(SIGSEGV); });
  EXPECT_NE(crash.find("signal 11, SIGSEGV"), std::string::npos) << crash;
  EXPECT_NE(io::crash_in_child([] { ::_exit(23); }).find("exit 23"), std::string::npos);
}

TEST(CrashInChild, TheCallerGoesOn) {
  int calls = 0;
  io::crash_in_child([&] { ++calls; });  // in the child's copy of the memory
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace adi3d::test
