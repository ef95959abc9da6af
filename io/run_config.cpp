#include "io/run_config.hpp"

#include "solvers/spectral_solve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace adi3d::io {
namespace {

std::array<double, 3> three_values(const Deck& deck, const std::string& key,
                                   std::array<double, 3> fallback) {
  if (!deck.has(key)) return fallback;
  const std::vector<double> v = deck.get_doubles(key);
  if (v.size() == 1) return {v[0], v[0], v[0]};
  if (v.size() == 3) return {v[0], v[1], v[2]};
  deck.fail(key, "expected one value or three (x y z)");
}

template <class E>
E choose(const Deck& deck, const std::string& key, const std::string& fallback,
         std::initializer_list<std::pair<const char*, E>> choices) {
  const std::string value = deck.query_string(key).value_or(fallback);
  std::string valid;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    valid += valid.empty() ? name : std::string(", ") + name;
  }
  deck.fail(key, "expected one of: " + valid);
}

// "robin <h> ; <u_inf>" (after the word): two formulas, h >= 0 checked where sampled.
void read_robin(const Deck& deck, const std::string& key, const std::string& rest, FaceConfig& face) {
  const std::string form = "expected 'robin <h> ; <u_inf>' (h: heat transfer coefficient over rho c, "
                           "u_inf: ambient value; values or formulas in x,y,z,t)";
  const auto semicolon = rest.find(';');
  if (semicolon == std::string::npos || rest.find(';', semicolon + 1) != std::string::npos) deck.fail(key, form);
  auto part = [&](std::string text) {
    const auto b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
    if (b == std::string::npos) deck.fail(key, form);
    return text.substr(b, e - b + 1);
  };
  face.kind = BoundaryKind::robin;
  face.h = {part(rest.substr(0, semicolon)), key};
  face.value = {part(rest.substr(semicolon + 1)), key};
}

// "dirichlet <formula>", "neumann <formula>", "robin <h> ; <u_inf>" or "periodic".
FaceConfig read_face(const Deck& deck, const std::string& key) {
  FaceConfig face;
  const std::string text = deck.query_string(key).value_or("dirichlet 0");
  std::istringstream in(text);
  std::string word;
  in >> word;
  std::string rest;
  std::getline(in, rest);
  const auto b = rest.find_first_not_of(" \t");
  rest = b == std::string::npos ? "" : rest.substr(b);
  if (word == "periodic") {
    if (!rest.empty()) deck.fail(key, "'periodic' takes no value");
    face.kind = BoundaryKind::periodic;
    return face;
  }
  if (word == "robin") {
    read_robin(deck, key, rest, face);
    return face;
  }
  if (word == "dirichlet")
    face.kind = BoundaryKind::dirichlet;
  else if (word == "neumann")
    face.kind = BoundaryKind::neumann;
  else
    deck.fail(key, "expected 'dirichlet <value|formula>', 'neumann <value|formula>', 'robin <h> ; <u_inf>' or "
                   "'periodic'");
  if (rest.empty()) deck.fail(key, "'" + word + "' needs a value or a formula in x,y,z,t");
  face.value = {rest, key};
  return face;
}

DiffusivityConfig read_diffusivity(const Deck& deck) {
  const std::string key = "material.diffusivity";
  DiffusivityConfig d;
  if (!deck.has(key)) return d;
  const std::string text = deck.get_string(key);
  if (text.rfind("formula", 0) == 0) {
    d.kind = DiffusivityConfig::Kind::formula;
    d.formula = {text.substr(7), key};
    if (d.formula.text.find_first_not_of(" \t") == std::string::npos)
      deck.fail(key, "'formula' needs an expression in x,y,z");
    return d;
  }
  if (text.rfind("hdf5", 0) == 0) {
    d.kind = DiffusivityConfig::Kind::hdf5;
    std::string spec = text.substr(4);
    spec = spec.substr(std::min(spec.size(), spec.find_first_not_of(" \t")));
    const auto colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
      deck.fail(key, "expected 'hdf5 FILE:/DATASET'");
    d.file = spec.substr(0, colon);
    d.dataset = spec.substr(colon + 1);
    return d;
  }
  d.values = three_values(deck, key, d.values);
  for (double v : d.values)
    if (v <= 0) deck.fail(key, "diffusivity must be positive");
  return d;
}

// output.interval, output.precision, output.compression, output.fields, output.checkpoint_every.
void read_output_extras(const Deck& deck, RunConfig& c) {
  OutputConfig& o = c.output;
  o.interval = deck.query_double("output.interval").value_or(0);
  if (o.interval < 0) deck.fail("output.interval", "must be >= 0");
  if (o.interval > 0 && o.every > 0)
    deck.fail("output.interval", "give output.every (steps) or output.interval (time), not both");
  o.single = choose<bool>(deck, "output.precision", "same", {{"same", false}, {"float", true}});
  if (const std::optional<std::string> text = deck.query_string("output.compression")) {
    std::string why;
    const std::optional<Compression> compression = parse_compression(*text, &why);
    if (!compression) deck.fail("output.compression", why);
    o.compression = *compression;
  }
  o.checkpoint_every = deck.query_int("output.checkpoint_every").value_or(0);
  if (o.checkpoint_every < 0) deck.fail("output.checkpoint_every", "must be >= 0");
  const bool variable_alpha = c.diffusivity.kind != DiffusivityConfig::Kind::constant;
  if (!deck.has("output.fields")) {
    o.fields = {"u"};
    if (c.exact) o.fields.push_back("error");
    if (variable_alpha) o.fields.push_back("alpha");
    return;
  }
  std::istringstream words(deck.get_string("output.fields"));
  for (std::string word; words >> word;) {
    if (word != "u" && word != "error" && word != "alpha")
      deck.fail("output.fields", "unknown field '" + word + "'; expected any of: u error alpha");
    if (word == "error" && !c.exact) deck.fail("output.fields", "'error' needs check.exact in the deck");
    if (word == "alpha" && !variable_alpha)
      deck.fail("output.fields", "'alpha' needs a variable material.diffusivity (formula or hdf5)");
    if (std::find(o.fields.begin(), o.fields.end(), word) != o.fields.end())
      deck.fail("output.fields", "'" + word + "' is listed twice");
    o.fields.push_back(word);
  }
  if (o.fields.empty()) deck.fail("output.fields", "name at least one of: u error alpha");
}

}  // namespace

RunConfig read_run_config(const Deck& deck) {
  RunConfig c;
  c.deck_name = deck.path();
  c.deck_text = deck.effective_text();
  c.problem = choose<ProblemType>(deck, "problem.type", "heat",
                                  {{"heat", ProblemType::heat}, {"poisson", ProblemType::poisson}});

  for (int f = 0; f < 6; ++f) {
    c.faces[f] = read_face(deck, std::string("boundary.") + face_name(f));
    c.bc.face[f] = c.faces[f].kind;
  }
  for (int axis = 0; axis < 3; ++axis) {
    const bool lo = c.bc.lo(axis) == BoundaryKind::periodic, hi = c.bc.hi(axis) == BoundaryKind::periodic;
    if (lo != hi) {
      const int periodic_face = 2 * axis + (lo ? 0 : 1), other = 2 * axis + (lo ? 1 : 0);
      deck.fail(std::string("boundary.") + face_name(periodic_face),
                fmt::format("periodic on {} needs periodic on {} too", face_name(periodic_face),
                            face_name(other)));
    }
  }

  const std::vector<double> n = deck.get_doubles("grid.n");
  if (n.size() != 1 && n.size() != 3) deck.fail("grid.n", "expected one value or three (nx ny nz)");
  c.grid.lo = three_values(deck, "grid.lo", {0, 0, 0});
  c.hi = three_values(deck, "grid.hi", {1, 1, 1});
  for (int a = 0; a < 3; ++a) {
    const double na = n.size() == 1 ? n[0] : n[a];
    // The range is checked before the integer test: converting 1e300 or NaN to an integer
    // is undefined (the deck fuzzer found it).
    if (!(na >= 3 && na <= 1 << 16) || na != std::floor(na))
      deck.fail("grid.n", "each node count must be an integer between 3 and 65536");
    c.grid.n[a] = static_cast<int>(na);
    if (!(c.hi[a] > c.grid.lo[a])) deck.fail("grid.hi", "must exceed grid.lo on every axis");
    c.grid.h[a] = grid_spacing(c.grid.lo[a], c.hi[a], c.grid.n[a], c.bc.periodic(a));
  }
  // The lines along an axis are counted in int and unsigned by the line solvers (cuSPARSE
  // batches, the CUDA x-line solve), so every plane of the grid must have fewer nodes than
  // INT_MAX; 65536 x 65536 lines would have wrapped to 0. Totals and offsets are size_t.
  for (int a = 0; a < 3; ++a) {
    const int u = (a + 1) % 3, v = (a + 2) % 3;
    const double plane = static_cast<double>(c.grid.n[u]) * c.grid.n[v];
    if (plane > std::numeric_limits<int>::max())
      deck.fail("grid.n", fmt::format("{} x {} nodes in a plane is more than the {} lines an axis may have; "
                                      "make the grid smaller",
                                      c.grid.n[u], c.grid.n[v], std::numeric_limits<int>::max()));
  }

  c.diffusivity = read_diffusivity(deck);
  if (deck.has("initial.u")) c.initial = {deck.get_string("initial.u"), "initial.u"};
  if (deck.has("source.f")) c.source = {deck.get_string("source.f"), "source.f"};
  if (deck.has("check.exact")) c.exact = FormulaText{deck.get_string("check.exact"), "check.exact"};

  if (c.problem == ProblemType::heat) {
    c.dt = deck.get_double("time.dt");
    if (!(c.dt > 0) || !std::isfinite(c.dt)) deck.fail("time.dt", "must be > 0 and finite");
    c.t_end = deck.get_double("time.t_end");
    if (!(c.t_end >= 0) || !std::isfinite(c.t_end)) deck.fail("time.t_end", "must be >= 0 and finite");
    // Step counts are longs, and a run of more steps than this is a slip of the exponent.
    constexpr double kMaxSteps = 1e12;
    const double steps = c.t_end / c.dt;
    if (!(steps <= kMaxSteps))
      deck.fail("time.dt", fmt::format("gives {:.3g} steps to time.t_end = {:g}; at most 1e12 steps: raise "
                                       "time.dt or lower time.t_end", steps, c.t_end));
  }
  c.theta = deck.query_double("time.theta").value_or(0.5);
  if (c.theta < 0.5 || c.theta > 1) deck.fail("time.theta", "must lie in [0.5, 1]");

  c.backend = choose<BackendChoice>(deck, "solver.backend", "auto",
                                    {{"auto", BackendChoice::automatic},
                                     {"cpu", BackendChoice::cpu},
                                     {"cuda", BackendChoice::cuda}});
  c.mixed = choose<bool>(deck, "solver.precision", "double", {{"double", false}, {"float", false}, {"mixed", true}});
  c.precision = c.mixed ? Precision::f64
                        : choose<Precision>(deck, "solver.precision", "double",
                                            {{"double", Precision::f64}, {"float", Precision::f32}});
  if (c.mixed && c.problem != ProblemType::poisson)
    deck.fail("solver.precision", "'mixed' (float sweeps, double residual) is for problem.type = poisson; heat "
                                  "runs take float or double");
  // A float run steps with dt (and theta dt) in float: outside float's normal range they
  // become 0, a denormal or inf, and the steps silently do nothing or blow up.
  if (c.problem == ProblemType::heat && c.precision == Precision::f32 &&
      !(c.dt >= std::numeric_limits<float>::min() && c.dt <= std::numeric_limits<float>::max()))
    deck.fail("time.dt", fmt::format("is not representable in float (normal range {:g} to {:g}); use "
                                     "solver.precision = double or rescale time",
                                     std::numeric_limits<float>::min(), std::numeric_limits<float>::max()));
  c.device = static_cast<int>(deck.query_int("solver.device").value_or(0));
  if (c.device < 0) deck.fail("solver.device", "must be >= 0");
  c.tol = deck.query_double("solver.tol").value_or(0);
  if (deck.has("solver.tol") && !(c.tol > 0 && c.tol < 1)) deck.fail("solver.tol", "must lie in (0, 1)");
  // Float residuals stall near 1e-7 relative: a smaller target can only burn iterations.
  if (c.problem == ProblemType::poisson && c.precision == Precision::f32 && deck.has("solver.tol") && c.tol < 1e-6)
    deck.fail("solver.tol", "is below what float arithmetic reaches (about 1e-6); use solver.tol >= 1e-6, "
                            "solver.precision = mixed (float sweeps, double residual) or double");
  c.max_iter = deck.query_int("solver.max_iter").value_or(1000);
  if (c.max_iter < 1) deck.fail("solver.max_iter", "must be >= 1");
  c.adi_cycle = static_cast<int>(deck.query_int("solver.cycle").value_or(0));
  if (c.adi_cycle < 0 || c.adi_cycle > 64) deck.fail("solver.cycle", "must lie in [0, 64]");
  c.method = choose<PoissonMethod>(deck, "solver.method", "auto",
                                   {{"auto", PoissonMethod::automatic},
                                    {"adi", PoissonMethod::adi},
                                    {"spectral", PoissonMethod::spectral},
                                    {"krylov", PoissonMethod::krylov}});
  if (c.method != PoissonMethod::automatic && c.problem != ProblemType::poisson)
    deck.fail("solver.method", "is for problem.type = poisson; heat runs step by ADI");
  c.preconditioner = choose<PreconditionerChoice>(deck, "solver.preconditioner", "auto",
                                                  {{"auto", PreconditionerChoice::automatic},
                                                   {"spectral", PreconditionerChoice::spectral},
                                                   {"adi", PreconditionerChoice::adi}});
  if (deck.has("solver.preconditioner") && c.method != PoissonMethod::krylov)
    deck.fail("solver.preconditioner", "is for solver.method = krylov");
  if (c.method == PoissonMethod::spectral) {
    // A diffusivity field may be one of z alone: checked where it is sampled (run_command.cpp).
    const SpectralObstacle obstacle = spectral_obstacle(c.bc, false);
    if (!obstacle.none()) deck.fail("solver.method", obstacle.refusal());
  }

  c.output.dir = deck.query_string("output.dir").value_or("output");
  if (c.output.dir.empty()) deck.fail("output.dir", "must not be empty");
  c.output.every = deck.query_int("output.every").value_or(0);
  if (c.output.every < 0) deck.fail("output.every", "must be >= 0");
  std::istringstream formats(deck.query_string("output.formats").value_or("none"));
  for (std::string word; formats >> word;) {
    if (word == "hdf5")
      c.output.hdf5 = true;
    else if (word == "vtk")
      c.output.vtk = true;
    else if (word != "none")
      deck.fail("output.formats", "unknown format '" + word + "'; expected any of: hdf5 vtk, or none");
  }
  read_output_extras(deck, c);
  return c;
}

const char* to_string(ProblemType p) { return p == ProblemType::heat ? "heat" : "poisson"; }
const char* to_string(Precision p) { return p == Precision::f64 ? "double" : "float"; }
const char* to_string(PoissonMethod m) {
  return m == PoissonMethod::adi        ? "adi"
         : m == PoissonMethod::spectral ? "spectral"
         : m == PoissonMethod::krylov   ? "krylov"
                                        : "auto";
}
const char* to_string(PreconditionerChoice p) {
  return p == PreconditionerChoice::spectral ? "spectral" : p == PreconditionerChoice::adi ? "adi" : "auto";
}
const char* RunConfig::precision_name() const { return mixed ? "mixed" : to_string(precision); }
const char* to_string(BackendChoice b) {
  return b == BackendChoice::cpu ? "cpu" : b == BackendChoice::cuda ? "cuda" : "auto";
}

}  // namespace adi3d::io
