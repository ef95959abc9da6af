#pragma once
// From a checked deck to the objects a run steps: formulas compiled (a bad formula becomes
// a deck error at its key), the diffusion operator and its forcing. The grid formulas
// (initial.u, check.exact, material.diffusivity) are sampled once the backend is chosen,
// where it is (physics/grid_formula.hpp): on the GPU for a CUDA backend.
#include "io/run_config.hpp"
#include "physics/formula.hpp"
#include "physics/formula_forcing.hpp"
#include "physics/grid_formula.hpp"
#include "solvers/diffusion.hpp"
#include "solvers/distributed/communicator.hpp"

#include <memory>
#include <optional>

namespace adi3d::app {

template <class T>
struct ProblemSetup {
  Diffusion<T> diffusion;
  std::unique_ptr<physics::FormulaForcing<T>> forcing;
  // initial.u, check.exact (null without one) and material.diffusivity where it is a
  // formula (null otherwise), on the rank's slab.
  std::unique_ptr<physics::GridFormula<T>> initial, exact, diffusivity;
  // The diffusivity formula's samples in backend memory (load_diffusivity), which
  // diffusion.backend_alpha points at.
  Array<T> alpha;
  // The ranks of the run (null: one); diffusion.slab says which planes are this rank's.
  Communicator* comm = nullptr;
  bool distributed() const { return diffusion.slab.distributed(); }
  bool root() const { return diffusion.slab.rank == 0; }
};

// Compiles one formula of the deck; errors name the deck line, the key and the position.
physics::Formula compile_formula(const io::Deck& deck, const io::FormulaText& text,
                                 const std::vector<std::string>& variables);

// On several ranks (comm), each samples its own slab (and its ghost planes) of the z
// split; a split the grid cannot take is a deck error at grid.n.
template <class T>
ProblemSetup<T> setup_problem(const io::Deck& deck, const io::RunConfig& config, Communicator* comm = nullptr);

// Samples a diffusivity formula on `backend` (on the GPU for a CUDA backend), once: a
// value that is not finite or not positive is a deck error at material.diffusivity, alike
// on every rank. Runs call it before stepping; without it a formula's field is missing
// (DouglasStepper and PoissonAdi would take the deck's alpha as constant), so run_heat and
// run_poisson refuse a problem that needs it and has not had it.
template <class T>
void load_diffusivity(const io::Deck& deck, ProblemSetup<T>& problem, Backend<T>& backend);
// Throws std::logic_error where the problem's diffusivity formula has not been loaded.
template <class T>
void require_loaded(const ProblemSetup<T>& problem);

}  // namespace adi3d::app
