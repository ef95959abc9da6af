// The adi3d executable end to end: exit codes, one clear line on stderr for bad input,
// and nothing written by a run that fails before stepping.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adi3d_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome run(const std::string& args) {
    const std::string cmd = std::string(ADI3D_EXE) + " " + args + " >" + (dir_ / "out").string() +
                            " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  }

  std::string deck(const std::string& text) {
    const fs::path p = dir_ / "deck.ini";
    std::ofstream(p) << text;
    return p.string();
  }

  std::string base_deck() {
    return "[grid]\nn = 9\n[time]\ndt = 0.01\nt_end = 0.02\n[initial]\nu = sin(pi*x)\n"
           "[output]\ndir = " + (dir_ / "results").string() + "\n";
  }

  static int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }

  fs::path dir_;
};

TEST_F(Cli, VersionHelpAndInfo) {
  Outcome o = run("--version");
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("adi3d "), std::string::npos);
  EXPECT_NE(o.out.find("(commit "), std::string::npos) << o.out;
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("run --help").code, 0);
  EXPECT_EQ(run("check --help").code, 0);
  o = run("info");
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("CUDA devices"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("distributed      "), std::string::npos) << o.out;
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("run").code, 2);
}

TEST_F(Cli, RunsTheExampleDeckAndReportsErrors) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR +
                        "/inputs/heat_sine.ini --set grid.n=17 --set time.t_end=0.01 --set solver.backend=cpu "
                        "--set output.dir=" + (dir_ / "results").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("L2 error"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("max error"), std::string::npos) << o.out;
  // The CPU backend runs the step operation by operation, and says so.
  EXPECT_NE(o.out.find("step path    operation by operation"), std::string::npos) << o.out;
  EXPECT_TRUE(fs::exists(dir_ / "results" / "summary.json"));
  const std::string summary = slurp(dir_ / "results" / "summary.json");
  EXPECT_NE(summary.find("\"fused_steps\": 0"), std::string::npos) << summary;
}

// Issue 38: where a run's seconds go, on stdout with --verbose and always in the summary.
TEST_F(Cli, VerboseRunsSayWhereTheSecondsWent) {
  const std::string run_args = std::string("run ") + ADI3D_SOURCE_DIR +
                               "/inputs/heat_sine.ini -q --set grid.n=9 --set time.t_end=0.01 "
                               "--set solver.backend=cpu --set output.dir=" +
                               (dir_ / "results").string();
  Outcome o = run(run_args);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("timings"), std::string::npos) << o.out;
  const std::string summary = slurp(dir_ / "results" / "summary.json");
  for (const char* key : {"\"setup\"", "\"initial\"", "\"stepping\"", "\"checks\"", "\"output\"", "\"error\"",
                          "\"total\""})
    EXPECT_NE(summary.find(key), std::string::npos) << key << " in " << summary;
  o = run(run_args + " --verbose");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* part : {"  timings      set-up ", "initial data ", "stepping ", "checks ", "output ", "errors ",
                           "since the process began"})
    EXPECT_NE(o.out.find(part), std::string::npos) << part << " in " << o.out;
  EXPECT_EQ(o.out.find("compiling for the GPU"), std::string::npos) << "nothing compiled on the CPU: " << o.out;
}

TEST_F(Cli, DiffusivityFormulaMustBePositive) {
  for (const char* command : {"check ", "run -q "}) {
    const Outcome o = run(command + deck(base_deck() + "[material]\ndiffusivity = formula x - 0.25\n"));
    EXPECT_EQ(o.code, 2) << command << o.err;
    EXPECT_EQ(lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find("deck.ini:11: material.diffusivity"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("gives -0.25 (its smallest value on the grid); diffusivity must be positive"),
              std::string::npos)
        << o.err;
  }
}

TEST_F(Cli, CheckValidatesWithoutRunning) {
  const Outcome o = run("check " + deck(base_deck()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

TEST_F(Cli, UnknownKeyExitsTwoWithOneLine) {
  const Outcome o = run("run " + deck(base_deck() + "[solver]\nprecison = float\n"));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("deck.ini:11: unknown key 'solver.precison'; did you mean 'solver.precision'?"),
            std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

TEST_F(Cli, MissingKeyExitsTwo) {
  const Outcome o = run("check " + deck("[time]\ndt = 1\nt_end = 1\n"));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("grid.n"), std::string::npos) << o.err;
}

TEST_F(Cli, BadValuesExitTwo) {
  for (const char* set : {"grid.n=2", "time.dt=0", "time.dt=abc", "time.t_end=-1", "time.theta=0.3",
                          "material.diffusivity=-1"}) {
    const Outcome o = run("run " + deck(base_deck()) + " --set " + set);
    EXPECT_EQ(o.code, 2) << set;
    EXPECT_EQ(lines(o.err), 1) << set << ": " << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "results")) << set;
  }
}

TEST_F(Cli, MalformedFormulaNamesKeyLineAndPosition) {
  const Outcome o = run("run " + deck(base_deck() + "[source]\nf = sin(x) + * t\n"));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("deck.ini:11: source.f = 'sin(x) + * t': bad formula at position 10"),
            std::string::npos)
      << o.err;
}

TEST_F(Cli, UnwritableOutputDirectoryFailsBeforeStepping) {
  std::ofstream(dir_ / "a_file") << "not a directory";
  const Outcome o = run("run " + deck(base_deck()) + " --set output.dir=" + (dir_ / "a_file" / "sub").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("output.dir"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("summary"), std::string::npos) << "stepping started: " << o.out;
  EXPECT_EQ(slurp(dir_ / "a_file"), "not a directory");
}

TEST_F(Cli, CudaBackendWithoutGpuIsARuntimeFailure) {
  const Outcome o = run("run " + deck(base_deck()) + " --set solver.backend=cuda");
  if (o.code == 0) GTEST_SKIP() << "a usable GPU is present";
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("CUDA"), std::string::npos) << o.err;
}

TEST_F(Cli, BenchAdiNeedsCudaAndChecksItsOptions) {
  EXPECT_EQ(run("bench adi --help").code, 0);
  EXPECT_EQ(run("bench adi --parts nothing").code, 2);
  EXPECT_EQ(run("bench adi --precision half").code, 2);
  const Outcome o = run("bench adi --parts steps --sizes 9 --repetitions 1");
  if (o.code == 0) GTEST_SKIP() << "a usable GPU is present";
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("CUDA"), std::string::npos) << o.err;
}

TEST_F(Cli, BenchCpuWritesJsonAndAgreesWithLapack) {
  const Outcome o = run("bench cpu --sizes 12 --repetitions 2 --json " + (dir_ / "bench.json").string());
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string json = slurp(dir_ / "bench.json");
  EXPECT_NE(json.find("\"dgtsv_ms\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"command\": \"adi3d bench cpu --sizes 12"), std::string::npos) << json;
  const auto at = json.find("\"max_difference\": ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(std::stod(json.substr(at + 18)), 1e-12) << "our line solves and dgtsv disagree";
  EXPECT_EQ(run("bench gpu-that-does-not-exist").code, 2);
}

// The benchmark behind issue 39's mixed-precision table and issue 45's direct solve, on the
// CPU at a small size: a row per method and precision, double and mixed to --tol, float to
// its default; the direct solve beside the iteration.
TEST_F(Cli, BenchPoissonComparesThePrecisions) {
  const Outcome o = run(std::string("bench poisson --backend cpu --sizes 9 --repetitions 1 --deck ") +
                        ADI3D_SOURCE_DIR + "/inputs/poisson_dirichlet.ini --json " + (dir_ / "bench.json").string());
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string json = slurp(dir_ / "bench.json");
  for (const char* key : {"\"benchmark\": \"poisson\"", "\"precision\": \"double\"", "\"precision\": \"float\"",
                          "\"precision\": \"mixed\"", "\"refinements\"", "\"speedup_vs_double\"",
                          "\"max_error_vs_exact\"", "\"method\": \"adi\"", "\"method\": \"spectral\"",
                          "\"speedup_vs_adi\"", "\"setup_s\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  EXPECT_EQ(json.find("\"converged\": false"), std::string::npos) << json;
  EXPECT_EQ(run("bench poisson --precisions half").code, 2);
  EXPECT_EQ(run("bench poisson --methods cg").code, 2);
  // A deck whose alpha varies inside planes: the iteration (which diverges there) beside
  // conjugate gradients with each preconditioner.
  const Outcome vias = run(std::string("bench poisson --backend cpu --sizes 9 --repetitions 1 --precisions double ") +
                           "--methods adi krylov:spectral krylov:adi --deck " + ADI3D_SOURCE_DIR +
                           "/inputs/chip_vias.ini --json " + (dir_ / "vias.json").string());
  ASSERT_EQ(vias.code, 0) << vias.err;
  const std::string rows = slurp(dir_ / "vias.json");
  for (const char* key : {"\"method\": \"adi\"", "\"method\": \"krylov:spectral\"", "\"method\": \"krylov:adi\""})
    EXPECT_NE(rows.find(key), std::string::npos) << key << " in " << rows;
}

// solver.method: auto solves a separable deck directly and says so; the two-layer slab
// (alpha of z alone) directly too, exact; spectral over a field that varies along x is a
// one-line deck error naming solver.method's line and the diffusivity.
TEST_F(Cli, PoissonMethodIsChosenAndReported) {
  const Outcome a = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini -q --set grid.n=9 " +
                        "--set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("method spectral: one direct solve (auto"), std::string::npos) << a.out;
  EXPECT_NE(slurp(dir_ / "results" / "summary.json").find("\"method\": \"spectral\""), std::string::npos);
  const Outcome slab = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/slab_two_layer.ini -q " +
                           "--set solver.method=spectral --set output.dir=" + (dir_ / "slab").string());
  EXPECT_EQ(slab.code, 0) << slab.err;
  const std::string summary = slurp(dir_ / "slab" / "summary.json");
  const auto at = summary.find("\"max\": ");
  ASSERT_NE(at, std::string::npos) << summary;
  EXPECT_LT(std::stod(summary.substr(at + 7)), 1e-12) << summary;
  const Outcome field = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/slab_two_layer.ini -q " +
                            "--set solver.method=spectral --set \"material.diffusivity=formula 1 + x\" " +
                            "--set output.dir=" + (dir_ / "field").string());
  EXPECT_EQ(field.code, 2);
  EXPECT_EQ(lines(field.err), 1) << field.err;
  EXPECT_NE(field.err.find("solver.method"), std::string::npos) << field.err;
  EXPECT_NE(field.err.find("material.diffusivity does not: alpha varies along x or y"), std::string::npos)
      << field.err;
  const Outcome adi = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini -q --set grid.n=9 " +
                          "--set solver.method=adi --set output.dir=" + (dir_ / "adi").string());
  EXPECT_EQ(adi.code, 0) << adi.err;
  EXPECT_NE(adi.out.find("method adi,"), std::string::npos) << adi.out;
}

// Conjugate gradients: on the CPU auto takes them where alpha varies inside planes (a stack
// with vias, contrast 1000 inside a plane), preconditioned by the direct solve; where that
// cannot run (a Robin x face) auto iterates by ADI and, as it diverges, goes on by CG from
// the initial guess, saying so; krylov asked for solves the slab with a column of other
// alpha; a singular problem with such a field converges too; the direct solve asked for
// as preconditioner where a face keeps it out is a one-line error at the key; and the ADI
// iteration asked for on the stack diverges with a warning that names krylov.
TEST_F(Cli, KrylovMethodTakesWhatTheAdiIterationDoesNot) {
  const std::string stack_deck = std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/chip_vias.ini -q " +
                                 "--set solver.method=auto --set solver.backend=cpu --set \"grid.n=17 17 21\" " +
                                 "--set output.formats=none ";
  const Outcome stack = run(stack_deck + "--set output.dir=" + (dir_ / "stack").string());
  EXPECT_EQ(stack.code, 0) << stack.err;
  EXPECT_NE(stack.out.find("method krylov (auto: alpha varies inside planes, on the CPU): conjugate gradients, "
                           "preconditioned by the direct solve"),
            std::string::npos)
      << stack.out;
  EXPECT_NE(stack.out.find("conjugate gradients (converged)"), std::string::npos) << stack.out;
  const Outcome side = run(stack_deck + "--set \"boundary.x-=robin 0.012055 ; 25\" --set output.dir=" +
                           (dir_ / "side").string());
  EXPECT_EQ(side.code, 0) << side.err;
  EXPECT_NE(side.out.find("method adi (auto; conjugate gradients if it diverges)"), std::string::npos) << side.out;
  EXPECT_NE(side.out.find("the ADI iteration diverged (relative residual"), std::string::npos) << side.out;
  EXPECT_NE(side.out.find("conjugate gradients (converged), each preconditioned by a cycle of"), std::string::npos)
      << side.out;
  const std::string side_summary = slurp(dir_ / "side" / "summary.json");
  EXPECT_NE(side_summary.find("\"method\": \"krylov\""), std::string::npos) << side_summary;
  EXPECT_NE(side_summary.find("\"abandoned_adi\""), std::string::npos) << side_summary;
  const std::string vias = "--set \"material.diffusivity=formula z < 0.5 ? ((x > 0.4 && x < 0.6) ? 50 : 1) : 100\" ";
  const Outcome k = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/slab_two_layer.ini -q " + vias +
                        "--set solver.method=krylov --set output.dir=" + (dir_ / "krylov").string());
  EXPECT_EQ(k.code, 0) << k.err;
  EXPECT_NE(k.out.find("method krylov: conjugate gradients, preconditioned by the direct solve of the plane-mean "
                       "alpha (auto)"),
            std::string::npos)
      << k.out;
  EXPECT_NE(k.out.find("conjugate gradients (converged)"), std::string::npos) << k.out;
  EXPECT_NE(slurp(dir_ / "krylov" / "summary.json").find("\"method\": \"krylov\""), std::string::npos);
  const Outcome cycles = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/slab_two_layer.ini -q " + vias +
                             "--set solver.method=krylov --set solver.preconditioner=adi --set output.dir=" +
                             (dir_ / "cycles").string());
  EXPECT_EQ(cycles.code, 0) << cycles.err;
  EXPECT_NE(cycles.out.find("preconditioned by a cycle of ADI steps, tol"), std::string::npos) << cycles.out;
  EXPECT_NE(cycles.out.find("each preconditioned by a cycle of"), std::string::npos) << cycles.out;
  const Outcome singular =
      run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini -q --set grid.n=9 " +
          "--set \"material.diffusivity=formula 1 + 0.5*sin(pi*x)*cos(pi*y)\" --set solver.method=krylov " +
          "--set output.dir=" +
          (dir_ / "singular").string());
  EXPECT_EQ(singular.code, 0) << singular.err;
  EXPECT_NE(singular.out.find("conjugate gradients (converged)"), std::string::npos) << singular.out;
  const Outcome robin = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/slab_two_layer.ini -q " + vias +
                            "--set solver.method=krylov --set solver.preconditioner=spectral " +
                            "--set \"boundary.x-=robin 1 ; 0\" --set output.dir=" + (dir_ / "robin").string());
  EXPECT_EQ(robin.code, 2);
  EXPECT_EQ(lines(robin.err), 1) << robin.err;
  EXPECT_NE(robin.err.find("solver.preconditioner"), std::string::npos) << robin.err;
  EXPECT_NE(robin.err.find("the x- face is robin"), std::string::npos) << robin.err;
  const Outcome diverging = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/chip_vias.ini -q " +
                                "--set solver.method=adi --set \"grid.n=17 17 21\" --set output.formats=none " +
                                "--set output.dir=" + (dir_ / "diverging").string());
  EXPECT_EQ(diverging.code, 3);
  EXPECT_EQ(lines(diverging.err), 1) << diverging.err;
  EXPECT_NE(diverging.err.find("Poisson iteration diverged"), std::string::npos) << diverging.err;
  EXPECT_NE(diverging.err.find("solver.method = krylov (or auto) converges there"), std::string::npos)
      << diverging.err;
}

TEST_F(Cli, PoissonThatDoesNotConvergeExitsOneWithTheResidual) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_dirichlet.ini -q --set solver.method=adi --set grid.n=9 " +
                        "--set solver.max_iter=3 --set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("solver.max_iter = 3"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("NOT converged"), std::string::npos) << o.out;
}

// Issue 39 item 3: a float Poisson solve asked for less than its rounding floor stops on
// it, writes its result, says on one line how far it got, why, and what goes further, and
// exits 3.
TEST_F(Cli, FloatPoissonOnItsRoundingFloorWritesItsResultAndExitsThree) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini -q --set solver.method=adi --set grid.n=33 " +
                        "--set solver.precision=float --set solver.tol=1e-6 --set output.formats=hdf5 " +
                        "--set solver.backend=cpu --set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_EQ(lines(o.err), 1) << o.err;
  for (const char* words : {"stagnated at relative residual", "above solver.tol = 1e-06", "float's rounding floor",
                            "solver.precision = mixed", "the result is written"})
    EXPECT_NE(o.err.find(words), std::string::npos) << words << ": " << o.err;
  EXPECT_NE(o.out.find("NOT converged, stagnated"), std::string::npos) << o.out;
  EXPECT_TRUE(fs::exists(dir_ / "results" / "snapshots.h5"));
  const std::string summary = slurp(dir_ / "results" / "summary.json");
  EXPECT_NE(summary.find("\"stop_reason\": \"stagnated\""), std::string::npos) << summary;
}

// solver.precision = mixed: float sweeps, the double residual, ten digits.
TEST_F(Cli, MixedPrecisionPoissonReachesTenDigits) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_dirichlet.ini -q --set solver.method=adi --set grid.n=17 " +
                        "--set solver.precision=mixed --set solver.tol=1e-10 --set solver.backend=cpu " +
                        "--set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", mixed, backend cpu"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("float sweeps in"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("refinements (converged)"), std::string::npos) << o.out;
  const std::string summary = slurp(dir_ / "results" / "summary.json");
  EXPECT_NE(summary.find("\"precision\": \"mixed\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"refinement_history\""), std::string::npos) << summary;
}

TEST_F(Cli, IncompatibleNeumannDataIsADeckError) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini -q --set grid.n=9 " +
                        "--set source.f=1 --set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("must balance"), std::string::npos) << o.err;
}

// The compatibility shift is the data's mean under half-cell weights: f + 0.001 x^2 on the
// balanced poisson_neumann data shifts by 0.001 times the trapezoid rule's mean of x^2 on
// 9 nodes, 0.3359375 (the plain node mean would be 0.354).
TEST_F(Cli, CompatibilityShiftIsTheHalfCellWeightedMean) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_neumann.ini --set grid.n=9 " +
                        "--set \"source.f=3*pi^2*cos(pi*x)*cos(pi*y)*cos(pi*z) - 6*(x - 0.5) + 0.001*x^2\" " +
                        "--set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("removed 3.359e-04 from f"), std::string::npos) << o.out;
}

// Issue 39 item 4: data that is not finite on the grid is a deck error (exit 2) at its
// key, naming a node and the time, found where the data is sampled.
TEST_F(Cli, SourceInfiniteOnAPlaneIsADeckError) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/heat_sine.ini -q --set grid.n=17 " +
                        "--set 'source.f=1/(x-0.5)' --set solver.backend=cpu --set output.dir=" +
                        (dir_ / "results").string());
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("--set: source.f = '1/(x-0.5)': gives inf at the node (x, y, z) = (0.5, 0, 0), t = 0.0005"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.out.find("summary"), std::string::npos) << o.out;
}

TEST_F(Cli, EveryFormulaKeyIsCheckedOnTheGrid) {
  struct Case {
    std::string deck_text, set, key, where;
  };
  const Case cases[] = {
      {"", "--set initial.u=1/x", "--set: initial.u = '1/x'", "(x, y, z) = (0, 0, 0), t = 0"},
      // NaN from t = 0.025 on: found in the data of the third step's end.
      {"[boundary]\nx+ = dirichlet log(0.025 - t)\n", "", "deck.ini:11: boundary.x+", "(x, y, z) = (1, 0, 0), t = 0.03"},
      {"[boundary]\ny- = neumann 1/(z - 0.5)\n", "", "deck.ini:11: boundary.y-", "(x, y, z) = (0, 0, 0.5)"},
      {"[check]\nexact = sqrt(x - 0.5)\n", "", "deck.ini:11: check.exact", "t = 0.05"},
      {"[material]\ndiffusivity = formula 1/(y - 0.25)\n", "", "deck.ini:11: material.diffusivity",
       "(x, y, z) = (0, 0.25, 0)"},
  };
  for (const Case& c : cases) {
    const Outcome o = run("run -q " + deck(base_deck() + c.deck_text) + " --set time.t_end=0.05 " + c.set);
    EXPECT_EQ(o.code, 2) << c.key << ": " << o.err;
    EXPECT_EQ(lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find(c.key), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(c.where), std::string::npos) << o.err;
    EXPECT_EQ(o.out.find("summary"), std::string::npos) << o.out;
  }
}

TEST_F(Cli, PoissonIterationThatOverflowsStopsWithExitOne) {
  const Outcome o = run(std::string("run ") + ADI3D_SOURCE_DIR + "/inputs/poisson_dirichlet.ini -q --set grid.n=9 " +
                        "--set source.f=1e308 --set output.dir=" + (dir_ / "results").string());
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("at Poisson iteration"), std::string::npos) << o.err;
}

TEST_F(Cli, PoissonDataCannotDependOnTime) {
  const Outcome o = run(std::string("check ") + ADI3D_SOURCE_DIR + "/inputs/poisson_dirichlet.ini --set source.f=t");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("variable 't' is not available"), std::string::npos) << o.err;
}

}  // namespace
