#pragma once
// Shared pieces of the I/O tests: a fresh directory per test, running the adi3d
// executable, and a small heat deck with time-dependent source and Dirichlet data.
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

  Outcome run(const std::string& args) {
    const std::string cmd = std::string(ADI3D_EXE) + " " + args + " >" + (dir_ / "stdout").string() + " 2>" +
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
