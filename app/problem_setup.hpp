#pragma once
// From a checked deck to the objects a run steps: formulas compiled (a bad formula becomes
// a deck error at its key), the diffusion operator and its forcing.
#include "io/run_config.hpp"
#include "physics/formula.hpp"
#include "physics/formula_forcing.hpp"
#include "solvers/diffusion.hpp"

#include <memory>
#include <optional>

namespace adi3d::app {

template <class T>
struct ProblemSetup {
  Diffusion<T> diffusion;
  std::unique_ptr<physics::FormulaForcing<T>> forcing;
  physics::Formula initial{"0"};
  std::optional<physics::Formula> exact;
};

// Compiles one formula of the deck; errors name the deck line, the key and the position.
physics::Formula compile_formula(const io::Deck& deck, const io::FormulaText& text,
                                 const std::vector<std::string>& variables);

template <class T>
ProblemSetup<T> setup_problem(const io::Deck& deck, const io::RunConfig& config);

}  // namespace adi3d::app
