#pragma once
// Shared pieces of the I/O tests: a fresh directory per test, running the adi3d
// executable, a small heat deck with time-dependent source and Dirichlet data, and the u of
// a stored snapshot.
#include "io/hdf5_handles.hpp"
#include "io/snapshot.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace adi3d::test {

namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// u = sin(x + y + z + t) with its source and Dirichlet data on every face.
inline std::string moving_deck(const std::string& dir) {
  return "[grid]\nn = 9 8 7\nlo = 0 -0.5 0.25\nhi = 1 0.5 1.5\n"
         "[time]\ndt = 0.01\nt_end = 0.1\n"
         "[initial]\nu = sin(x + y + z)\n"
         "[source]\nf = cos(x + y + z + t) + 3 * sin(x + y + z + t)\n"
         "[boundary]\nx- = dirichlet sin(x + y + z + t)\nx+ = dirichlet sin(x + y + z + t)\n"
         "y- = dirichlet sin(x + y + z + t)\ny+ = dirichlet sin(x + y + z + t)\n"
         "z- = dirichlet sin(x + y + z + t)\nz+ = dirichlet sin(x + y + z + t)\n"
         "[solver]\nbackend = cpu\n"
         "[output]\ndir = " + dir + "\nformats = hdf5\n"
         "[check]\nexact = sin(x + y + z + t)\n";
}

// The adi3d executable the tests run: the build's, or ADI3D_TEST_EXE where the tests run
// from elsewhere (scripts/gpu-check on a device pack).
inline std::string adi3d_exe() {
  const char* other = std::getenv("ADI3D_TEST_EXE");
  return other && *other ? other : ADI3D_EXE;
}

// The u of snapshot `step` in a snapshots.h5, exactly as stored (float32 where `single`).
inline io::FieldBuffer stored_u(const std::string& h5, long step, const Grid3& g, bool single = false) {
  io::h5::Hdf5Lock lock;
  io::h5::Handle file = io::h5::open_file(h5, false);
  io::h5::Handle group = io::h5::open_group(file, "snapshots/" + io::snapshot_label(step), h5);
  io::FieldBuffer f;
  f.single = single;
  EXPECT_EQ(io::h5::dataset_float_size(group, "u", h5), single ? 4 : 8);
  io::h5::read_field(group, "u", g, single, &f.f32, &f.f64, h5);
  return f;
}

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // The process id keeps test runs from several build trees apart.
    std::string name = "adi3d_io_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
                       std::to_string(::getpid());
    for (char& c : name)
      if (c == '/') c = '_';  // parameterised tests
    dir_ = fs::temp_directory_path() / name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure() && !std::getenv("ADI3D_KEEP_TEST_OUTPUT")) fs::remove_all(dir_);
  }

  // `prefix` goes before the executable: environment settings, a time limit.
  Outcome run(const std::string& args, const std::string& prefix = "") {
    const std::string cmd = prefix + (prefix.empty() ? "" : " ") + adi3d_exe() + " " + args + " >" + (dir_ / "stdout").string() + " 2>" +
                            (dir_ / "stderr").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "stdout"), slurp(dir_ / "stderr")};
  }

  std::string write_deck(const std::string& text, const std::string& name = "deck.ini") {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
};

}  // namespace adi3d::test
