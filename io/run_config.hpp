#pragma once
// A checked, typed view of a deck: everything a run needs, with ranges validated where
// each value is read. Formulas stay text here (physics compiles them) but remember their
// key so that a formula error can point at the deck line.
#include "io/deck.hpp"
#include "io/output_compression.hpp"
#include "solvers/boundary.hpp"
#include "solvers/grid.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::io {

enum class ProblemType { heat, poisson };
enum class Precision { f32, f64 };
enum class BackendChoice { automatic, cpu, cuda };
// solver.method for Poisson: auto takes spectral where the problem separates (and the run
// has one rank), else adi.
enum class PoissonMethod { automatic, adi, spectral, krylov };
// solver.preconditioner for krylov: auto takes the direct solve where it applies, else adi.
enum class PreconditionerChoice { automatic, spectral, adi };

struct FormulaText {
  std::string text;
  std::string key;  // deck key it came from
};

struct FaceConfig {
  BoundaryKind kind = BoundaryKind::dirichlet;
  FormulaText value;  // Dirichlet value, Neumann outward normal derivative, or Robin u_inf
  FormulaText h;      // Robin: the coefficient h of -alpha du/dn = h (u - u_inf)
};

struct DiffusivityConfig {
  enum class Kind { constant, formula, hdf5 } kind = Kind::constant;
  std::array<double, 3> values{1.0, 1.0, 1.0};  // per axis, for Kind::constant
  FormulaText formula;                          // for Kind::formula
  std::string file, dataset;                    // for Kind::hdf5
};

struct OutputConfig {
  std::string dir = "output";
  long every = 0;
  double interval = 0;  // snapshot cadence in simulated time; 0: by steps (every)
  bool hdf5 = false;
  bool vtk = false;
  bool single = false;              // output.precision = float
  Compression compression;          // output.compression (HDF5 snapshots; off by default)
  std::vector<std::string> fields;  // resolved: u, error, alpha
  long checkpoint_every = 0;
};

struct RunConfig {
  std::string deck_name;
  std::string deck_text;  // effective deck text (file + overrides), for metadata
  ProblemType problem = ProblemType::heat;
  Grid3 grid;
  std::array<double, 3> hi{1.0, 1.0, 1.0};
  DiffusivityConfig diffusivity;
  FormulaText initial{"0", "initial.u"};
  FormulaText source{"0", "source.f"};
  BoundarySpec bc;
  std::array<FaceConfig, 6> faces;
  double dt = 0, t_end = 0, theta = 0.5;
  BackendChoice backend = BackendChoice::automatic;
  Precision precision = Precision::f64;
  // solver.precision = mixed: a Poisson solve in double by float sweeps (defect
  // correction, solvers/poisson_mixed.hpp); precision is then f64, the solution's.
  bool mixed = false;
  int device = 0;
  double tol = 0;  // 0: the precision's default (PoissonAdi's default_tolerance)
  long max_iter = 1000;
  int adi_cycle = 0;  // 0: chosen from the eigenvalue spread
  PoissonMethod method = PoissonMethod::automatic;
  PreconditionerChoice preconditioner = PreconditionerChoice::automatic;
  OutputConfig output;
  std::optional<FormulaText> exact;

  // solver.precision as the deck says it: float, double or mixed.
  const char* precision_name() const;
};

// Throws DeckError naming the file, line and key of the first bad value.
RunConfig read_run_config(const Deck& deck);

const char* to_string(ProblemType p);
const char* to_string(Precision p);
const char* to_string(BackendChoice b);
const char* to_string(PoissonMethod m);
const char* to_string(PreconditionerChoice p);

}  // namespace adi3d::io
