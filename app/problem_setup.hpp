#pragma once
// From a checked deck to the objects a run steps: formulas compiled (a bad formula becomes
// a deck error at its key), the diffusion operator and its forcing.
#include "io/run_config.hpp"
#include "physics/formula.hpp"
#include "physics/formula_forcing.hpp"
#include "solvers/diffusion.hpp"
#include "solvers/distributed/communicator.hpp"

#include <memory>
#include <optional>

namespace adi3d::app {

template <class T>
struct ProblemSetup {
  Diffusion<T> diffusion;
  std::unique_ptr<physics::FormulaForcing<T>> forcing;
  physics::Formula initial{"0"};
  std::optional<physics::Formula> exact;
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

}  // namespace adi3d::app
