// Deck parsing and its error messages: file, line, key, and a suggestion.
#include "io/deck.hpp"
#include "io/run_config.hpp"

#include <gtest/gtest.h>

namespace adi3d::io {
namespace {

const char* kValid =
    "[grid]\n"
    "n = 17\n"
    "# a comment\n"
    "[time]\n"
    "dt = 0.01\n"
    "t_end = 0.1\n"
    "[boundary]\n"
    "x- = neumann 0.5*y\n"
    "y- = periodic\n"
    "y+ = periodic\n";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    read_run_config(Deck::parse(text, "deck.ini", sets));
  } catch (const DeckError& e) {
    return e.what();
  }
  return "";
}

TEST(Deck, ReadsValuesAndDefaults) {
  const RunConfig c = read_run_config(Deck::parse(kValid, "deck.ini"));
  EXPECT_EQ(c.grid.n[2], 17);
  EXPECT_DOUBLE_EQ(c.grid.h[0], 1.0 / 16);
  EXPECT_DOUBLE_EQ(c.grid.h[1], 1.0 / 17);  // periodic axis
  EXPECT_DOUBLE_EQ(c.dt, 0.01);
  EXPECT_DOUBLE_EQ(c.theta, 0.5);
  EXPECT_EQ(c.bc.face[0], BoundaryKind::neumann);
  EXPECT_EQ(c.faces[0].value.text, "0.5*y");
  EXPECT_EQ(c.bc.face[5], BoundaryKind::dirichlet);
  EXPECT_EQ(c.precision, Precision::f64);
}

// solver.precision = mixed: a double Poisson solve by float sweeps; float keeps its
// smallest tolerance and names the way past it.
TEST(Deck, MixedPrecisionIsADoublePoissonSolve) {
  const RunConfig c = read_run_config(Deck::parse(kValid, "deck.ini", {"problem.type=poisson", "solver.precision=mixed",
                                                                        "solver.tol=1e-12"}));
  EXPECT_TRUE(c.mixed);
  EXPECT_EQ(c.precision, Precision::f64);
  EXPECT_STREQ(c.precision_name(), "mixed");
  EXPECT_DOUBLE_EQ(c.tol, 1e-12);
  const RunConfig f =
      read_run_config(Deck::parse(kValid, "deck.ini", {"problem.type=poisson", "solver.precision=float"}));
  EXPECT_FALSE(f.mixed);
  EXPECT_STREQ(f.precision_name(), "float");
  EXPECT_EQ(f.tol, 0) << "no solver.tol: the solve takes float's default for its grid";
  const std::string e = error_of(kValid, {"problem.type=poisson", "solver.precision=float", "solver.tol=1e-8"});
  EXPECT_NE(e.find("solver.precision = mixed"), std::string::npos) << e;
}

// solver.method: auto by default; spectral on a problem that does not separate names the
// deck line of solver.method and what is in the way; heat runs take no method.
TEST(Deck, PoissonMethod) {
  const RunConfig a = read_run_config(Deck::parse(kValid, "deck.ini", {"problem.type=poisson"}));
  EXPECT_EQ(a.method, PoissonMethod::automatic);
  const RunConfig s = read_run_config(
      Deck::parse(std::string(kValid) + "x+ = neumann 0\n[solver]\nmethod = spectral\n", "deck.ini", {"problem.type=poisson"}));
  EXPECT_EQ(s.method, PoissonMethod::spectral);
  const std::string unlike =
      error_of(std::string(kValid) + "[solver]\nmethod = spectral\n", {"problem.type=poisson"});
  EXPECT_NE(unlike.find("deck.ini:12"), std::string::npos) << unlike;
  EXPECT_NE(unlike.find("solver.method"), std::string::npos) << unlike;
  EXPECT_NE(unlike.find("boundary.x+"), std::string::npos) << unlike;
  EXPECT_NE(unlike.find("x- and x+ faces differ"), std::string::npos) << unlike;
  // A field may be one of z alone: checked where it is sampled (Cli.PoissonMethodIsChosenAndReported).
  EXPECT_EQ(error_of(std::string(kValid) + "x+ = neumann 0\n[material]\ndiffusivity = formula 1 + x\n",
                     {"problem.type=poisson", "solver.method=spectral"}),
            "");
  // Robin faces: on x or y refused; on z taken (one h over the face is checked at run time).
  const std::string robin = error_of(std::string(kValid) + "x+ = robin 2 ; 0\n",
                                     {"problem.type=poisson", "solver.method=spectral"});
  EXPECT_NE(robin.find("boundary.x+ does not: the x+ face is robin"), std::string::npos) << robin;
  EXPECT_EQ(error_of(std::string(kValid) + "x+ = neumann 0\nz+ = robin 2 ; 0\n",
                     {"problem.type=poisson", "solver.method=spectral"}),
            "");
  EXPECT_EQ(error_of(kValid, {"problem.type=poisson", "solver.method=krylov"}), "");
  const std::string bad = error_of(kValid, {"problem.type=poisson", "solver.method=multigrid"});
  EXPECT_NE(bad.find("solver.method"), std::string::npos) << bad;
  EXPECT_NE(bad.find("krylov"), std::string::npos) << bad;  // the choices are listed
  const std::string heat = error_of(kValid, {"solver.method=adi"});
  EXPECT_NE(heat.find("problem.type = poisson"), std::string::npos) << heat;
  EXPECT_EQ(error_of(kValid, {"problem.type=poisson", "solver.method=adi"}), "");
}

TEST(Deck, SetOverridesTheFile) {
  const RunConfig c = read_run_config(Deck::parse(kValid, "deck.ini", {"time.dt=0.002", "grid.n = 9 10 11"}));
  EXPECT_DOUBLE_EQ(c.dt, 0.002);
  EXPECT_EQ(c.grid.n[1], 10);
}

TEST(Deck, UnknownKeyNamesFileLineAndSuggestion) {
  const std::string e = error_of(std::string(kValid) + "[time]\ndtt = 3\n");
  EXPECT_NE(e.find("deck.ini:12"), std::string::npos) << e;
  EXPECT_NE(e.find("'time.dtt'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'time.dt'"), std::string::npos) << e;
}

TEST(Deck, UnknownKeyInSetIsAnError) {
  const std::string e = error_of(kValid, {"solver.precsion=float"});
  EXPECT_NE(e.find("--set"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'solver.precision'"), std::string::npos) << e;
}

TEST(Deck, MissingRequiredKey) {
  const std::string e = error_of("[time]\ndt = 1\nt_end = 1\n");
  EXPECT_NE(e.find("missing required key 'grid.n'"), std::string::npos) << e;
  const std::string e2 = error_of("[grid]\nn = 5\n[time]\ndt = 1\n");
  EXPECT_NE(e2.find("'time.t_end'"), std::string::npos) << e2;
}

TEST(Deck, NonNumericValueNamesLineAndKey) {
  const std::string e = error_of("[grid]\nn = 17\n[time]\ndt = fast\nt_end = 1\n");
  EXPECT_NE(e.find("deck.ini:4"), std::string::npos) << e;
  EXPECT_NE(e.find("time.dt"), std::string::npos) << e;
  EXPECT_NE(e.find("not a finite number"), std::string::npos) << e;
}

struct RangeCase {
  const char* set;
  const char* key;
  const char* message;
};

TEST(Deck, OutOfRangeValues) {
  const RangeCase cases[] = {
      {"grid.n=2", "grid.n", "between 3 and"},
      {"grid.n=4.5", "grid.n", "integer"},
      {"grid.n=1e300", "grid.n", "between 3 and"},  // once undefined: converted to long first
      {"grid.n=nan", "grid.n", "not a finite number"},
      {"grid.n=-inf", "grid.n", "not a finite number"},
      {"time.dt=0", "time.dt", "> 0"},
      {"time.dt=-1e-3", "time.dt", "> 0"},
      {"time.t_end=-1", "time.t_end", ">= 0"},
      {"time.t_end=inf", "time.t_end", "finite"},
      {"time.dt=1e-300", "time.dt", "at most 1e12 steps"},
      {"time.theta=0.4", "time.theta", "[0.5, 1]"},
      {"time.theta=1.01", "time.theta", "[0.5, 1]"},
      {"material.diffusivity=-2", "material.diffusivity", "positive"},
      {"material.diffusivity=1 2", "material.diffusivity", "three"},
      {"solver.backend=gpu", "solver.backend", "auto, cpu, cuda"},
      {"solver.precision=half", "solver.precision", "double, float, mixed"},
      {"solver.precision=mixed", "solver.precision", "is for problem.type = poisson"},
      {"boundary.z+=convective 1", "boundary.z+", "dirichlet"},
      {"boundary.z+=dirichlet", "boundary.z+", "needs a value"},
      {"boundary.z+=periodic", "boundary.z+", "periodic on z+ needs periodic on z- too"},
      {"output.formats=hdf5 png", "output.formats", "unknown format 'png'"},
      {"grid.hi=0", "grid.hi", "exceed"},
  };
  for (const RangeCase& c : cases) {
    const std::string e = error_of(kValid, {c.set});
    EXPECT_NE(e.find(c.key), std::string::npos) << c.set << " -> " << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << c.set << " -> " << e;
    EXPECT_NE(e.find("--set"), std::string::npos) << c.set << " -> " << e;
  }
}

// Too many steps is the step's fault whichever key made it: the line names both values.
TEST(Deck, TooManyStepsNamesTheStepAndTheEnd) {
  const std::string e = error_of(kValid, {"time.t_end=1e300"});
  EXPECT_NE(e.find("time.dt = '0.01'"), std::string::npos) << e;
  EXPECT_NE(e.find("time.t_end = 1e+300"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 1e12 steps"), std::string::npos) << e;
  EXPECT_EQ(error_of(kValid, {"time.dt=1e-10", "time.t_end=100"}), "") << "1e12 steps exactly is allowed";
}

// Item 5 of issue 39: sizes and steps the index and float types cannot hold.
TEST(Deck, GridPlanesMustFitTheLineCounters) {
  const std::string e = error_of(kValid, {"grid.n=65536 65536 3"});
  EXPECT_NE(e.find("grid.n"), std::string::npos) << e;
  EXPECT_NE(e.find("65536 x 65536 nodes in a plane"), std::string::npos) << e;
  EXPECT_NE(error_of(kValid, {"grid.n=3 65536 40000"}).find("grid.n"), std::string::npos);
  EXPECT_EQ(error_of(kValid, {"grid.n=65536 32767 3"}), "") << "a plane of 2^31 - 65536 nodes is allowed";
}

TEST(Deck, FloatRunsNeedADtFloatCanHold) {
  const std::string e = error_of(kValid, {"solver.precision=float", "time.dt=1e-40", "time.t_end=1e-35"});
  EXPECT_NE(e.find("time.dt"), std::string::npos) << e;
  EXPECT_NE(e.find("not representable in float"), std::string::npos) << e;
  EXPECT_EQ(error_of(kValid, {"solver.precision=double", "time.dt=1e-40", "time.t_end=1e-35"}), "");
}

TEST(Deck, ValueErrorInFileNamesTheLine) {
  const std::string e = error_of(std::string(kValid) + "[material]\ndiffusivity = -1\n");
  EXPECT_NE(e.find("deck.ini:12: material.diffusivity = '-1'"), std::string::npos) << e;
}

TEST(Deck, SyntaxErrorsNameTheLine) {
  EXPECT_NE(error_of("[grid\nn = 3\n").find("deck.ini:1: malformed section"), std::string::npos);
  EXPECT_NE(error_of("[grid]\nn 3\n").find("deck.ini:2: expected 'key = value'"), std::string::npos);
  EXPECT_NE(error_of("[grid]\nn = 3\nn = 4\n").find("already set on line 2"), std::string::npos);
}

TEST(Deck, RobinFacesTakeACoefficientAndAnAmbientValue) {
  const RunConfig c =
      read_run_config(Deck::parse(kValid, "deck.ini", {"boundary.z+=robin 25 * (1 + x) ;  300 + t "}));
  EXPECT_EQ(c.bc.face[5], BoundaryKind::robin);
  EXPECT_EQ(c.faces[5].h.text, "25 * (1 + x)");
  EXPECT_EQ(c.faces[5].value.text, "300 + t");
  EXPECT_EQ(c.faces[5].h.key, "boundary.z+");
  for (const char* bad : {"robin 25", "robin 25 ;", "robin ; 300", "robin 1 ; 2 ; 3"}) {
    const std::string e = error_of(kValid, {std::string("boundary.z+=") + bad});
    EXPECT_NE(e.find("boundary.z+"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("robin <h> ; <u_inf>"), std::string::npos) << bad << ": " << e;
  }
}

TEST(Deck, ClosestKeySuggestsOnlyCloseNames) {
  EXPECT_EQ(closest_key("grid.nn"), "grid.n");
  EXPECT_EQ(closest_key("boundary.x"), "boundary.x-");
  EXPECT_EQ(closest_key("completely.unrelated.thing"), "");
}

}  // namespace
}  // namespace adi3d::io
