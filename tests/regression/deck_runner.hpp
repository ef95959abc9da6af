#pragma once
// Runs an example deck from inputs/ with overrides, in process, on the CPU (or CUDA) backend, and
// returns its errors against the deck's exact solution.
#include "app/heat_run.hpp"
#include "app/poisson_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"

#include <string>
#include <vector>

namespace adi3d::test {

template <class T = double>
physics::ErrorNorms run_example(const std::string& deck_name, std::vector<std::string> overrides,
                                BackendKind kind = BackendKind::cpu) {
  overrides.push_back(kind == BackendKind::cpu ? "solver.backend=cpu" : "solver.backend=cuda");
  const io::Deck deck = io::Deck::load(std::string(ADI3D_SOURCE_DIR) + "/inputs/" + deck_name, overrides);
  const io::RunConfig config = io::read_run_config(deck);
  app::ProblemSetup<T> problem = app::setup_problem<T>(deck, config);
  std::unique_ptr<Backend<T>> backend =
      kind == BackendKind::cpu ? make_cpu_backend<T>() : make_cuda_backend<T>(0);
  app::load_diffusivity(deck, problem, *backend);
  std::optional<physics::ErrorNorms> error;
  if (config.problem == io::ProblemType::heat) {
    error = app::run_heat(config, problem, *backend, false).error;
  } else {
    const app::PoissonResult r = app::run_poisson(config, problem, *backend, false);
    if (!r.report.converged) throw std::runtime_error(deck_name + ": Poisson iteration did not converge");
    error = r.error;
  }
  if (!error) throw std::runtime_error(deck_name + " has no check.exact");
  return *error;
}

}  // namespace adi3d::test
