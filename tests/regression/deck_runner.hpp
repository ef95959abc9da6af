#pragma once
// Runs an example deck from inputs/ with overrides, in process, on the CPU (or CUDA) backend, and
// returns its errors against the deck's exact solution.
#include "app/heat_run.hpp"
#include "app/poisson_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"

#include <algorithm>
#include <cmath>
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

// The final field of a run, downloaded and widened to double.
template <class T>
class FinalPoissonField final : public app::RunObserver<T> {
 public:
  void on_start(long, double, Backend<T>&, const T*) override {}
  void on_step(long, double, Backend<T>&, const T*) override {}
  void on_end(long, double, Backend<T>& backend, const T* u) override {
    std::vector<T> host(size);
    backend.download(u, host.data(), size);
    field.assign(host.begin(), host.end());
  }
  std::size_t size = 0;
  std::vector<double> field;
};

// A Poisson deck's solve and its final field (x fastest), in the precision its
// solver.precision names (float, double, or mixed: double with float sweeps).
struct PoissonRun {
  app::PoissonResult result;
  std::vector<double> field;
};

template <class T>
PoissonRun solve_poisson(const io::Deck& deck, const io::RunConfig& config, BackendKind kind) {
  app::ProblemSetup<T> problem = app::setup_problem<T>(deck, config);
  std::unique_ptr<Backend<T>> backend = kind == BackendKind::cpu ? make_cpu_backend<T>() : make_cuda_backend<T>(0);
  app::load_diffusivity(deck, problem, *backend);
  FinalPoissonField<T> capture;
  capture.size = problem.diffusion.grid.size();
  PoissonRun run{app::run_poisson(config, problem, *backend, false, &capture), {}};
  run.field = std::move(capture.field);
  return run;
}

inline PoissonRun run_poisson_example(const std::string& deck_name, std::vector<std::string> overrides,
                                      BackendKind kind = BackendKind::cpu) {
  overrides.push_back(kind == BackendKind::cpu ? "solver.backend=cpu" : "solver.backend=cuda");
  const io::Deck deck = io::Deck::load(std::string(ADI3D_SOURCE_DIR) + "/inputs/" + deck_name, overrides);
  const io::RunConfig config = io::read_run_config(deck);
  return config.precision == io::Precision::f64 ? solve_poisson<double>(deck, config, kind)
                                                : solve_poisson<float>(deck, config, kind);
}

// max |got - ref| over max |ref| (infinite where the sizes differ or got has a NaN).
inline double field_difference(const std::vector<double>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size()) return INFINITY;
  double largest = 0, difference = 0;
  for (std::size_t p = 0; p < ref.size(); ++p) {
    largest = std::max(largest, std::abs(ref[p]));
    const double d = std::abs(got[p] - ref[p]);
    if (!(d <= difference)) difference = std::isnan(d) ? INFINITY : d;
  }
  return difference / largest;
}

}  // namespace adi3d::test
