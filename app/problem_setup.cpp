#include "app/problem_setup.hpp"

#include "app/finite_check.hpp"
#include "io/field_input.hpp"
#include "physics/grid_functions.hpp"
#include "solvers/distributed/local_slab.hpp"
#include "solvers/face_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace adi3d::app {

physics::Formula compile_formula(const io::Deck& deck, const io::FormulaText& text,
                                 const std::vector<std::string>& variables) {
  try {
    physics::Formula f(text.text, variables);
    f.set_key(text.key);
    return f;
  } catch (const physics::FormulaError& e) {
    deck.fail(text.key, fmt::format("bad formula at position {}: {}", e.position() + 1, e.what()));
  }
}

namespace {

SlabDecomposition slab_for(const io::Deck& deck, const io::RunConfig& config, const Communicator* comm) {
  if (!comm || comm->size() == 1) return whole_grid_slab(config.grid, config.bc);
  try {
    return decompose_slabs(config.grid, config.bc, comm->rank(), comm->size());
  } catch (const std::invalid_argument& e) {
    deck.fail("grid.n", fmt::format("cannot split the grid over the ranks of this run: {}", e.what()));
  }
}

// A Robin face's h must be finite and >= 0 (h < 0 would feed heat in proportion to the
// excess over u_inf: no physical face, and no stable scheme): checked over the face at the
// start, on every rank alike. (An h that turns negative later is not caught here.)
std::array<double, 2> check_robin_h(const io::Deck& deck, const physics::Formula& h, const SlabDecomposition& slab,
                                    int face, Communicator* comm) {
  const std::string& key = h.key();
  double lowest = INFINITY, highest = -INFINITY;
  std::optional<physics::NonFiniteNode> bad;
  if (!slab.interface(face)) {
    std::vector<double> values(face_size(slab.local, face));
    bad = physics::sample_face(h, slab.local, face, 0.0, values.data());
    for (double v : values) {
      lowest = std::min(lowest, v);
      highest = std::max(highest, v);
    }
  }
  if (const auto sample = agree_on_sample(
          bad ? std::optional(physics::NonFiniteSample{key, bad->x, bad->y, bad->z, 0.0, bad->value}) : std::nullopt,
          comm))
    deck.fail(key, "the Robin coefficient h " + physics::describe(*sample));
  if (comm) {
    comm->allreduce_min(&lowest, 1);
    comm->allreduce_max(&highest, 1);
  }
  if (lowest < 0)
    deck.fail(key, fmt::format("the Robin coefficient h is {} somewhere on the face at t = 0; h must be >= 0 "
                               "(h = 0: insulated)", lowest));
  return {lowest, highest};
}

}  // namespace

template <class T>
ProblemSetup<T> setup_problem(const io::Deck& deck, const io::RunConfig& config, Communicator* comm) {
  const std::vector<std::string> space{"x", "y", "z"}, space_time{"x", "y", "z", "t"};
  ProblemSetup<T> s;
  s.comm = comm;
  const SlabDecomposition slab = slab_for(deck, config, comm);
  s.diffusion.slab = slab;
  s.diffusion.grid = slab.local;
  s.diffusion.bc = slab.local_bc;
  s.diffusion.alpha = config.diffusivity.values;
  switch (config.diffusivity.kind) {
    case io::DiffusivityConfig::Kind::constant:
      break;
    case io::DiffusivityConfig::Kind::formula:
      // Sampled where the run's backend is, once it is chosen (load_diffusivity).
      s.diffusivity = std::make_unique<physics::GridFormula<T>>(
          compile_formula(deck, config.diffusivity.formula, space), slab, true);
      break;
    case io::DiffusivityConfig::Kind::hdf5: {
      std::vector<double> values;
      try {
        values = io::read_grid_dataset(config.diffusivity.file, config.diffusivity.dataset, config.grid);
      } catch (const std::exception& e) {
        deck.fail("material.diffusivity", e.what());
      }
      for (std::size_t p = 0; p < values.size(); ++p)
        if (!(values[p] > 0))
          deck.fail("material.diffusivity", fmt::format("the dataset holds {} at node {} (x fastest); "
                                                        "diffusivity must be positive", values[p], p));
      s.diffusion.alpha_field = local_slab<T>(slab, values.data());
      break;
    }
  }
  if (slab.distributed() && !s.diffusion.alpha_field.empty()) {
    const auto [lo, hi] = std::minmax_element(s.diffusion.alpha_field.begin(), s.diffusion.alpha_field.end());
    double range[2] = {static_cast<double>(*lo), static_cast<double>(*hi)};
    comm->allreduce_min(&range[0], 1);
    comm->allreduce_max(&range[1], 1);
    s.diffusion.whole_alpha_range = {range[0], range[1]};
  }

  // A steady problem's data cannot depend on time.
  const std::vector<std::string>& data_vars =
      config.problem == io::ProblemType::poisson ? space : space_time;
  s.initial = std::make_unique<physics::GridFormula<T>>(compile_formula(deck, config.initial, space), slab);
  physics::Formula source = compile_formula(deck, config.source, data_vars);
  std::array<std::optional<physics::Formula>, 6> faces, robin_h;
  std::array<std::array<double, 2>, 6> robin_range{};
  for (int f = 0; f < 6; ++f) {
    if (config.faces[f].kind != BoundaryKind::periodic)
      faces[f] = compile_formula(deck, config.faces[f].value, data_vars);
    if (config.faces[f].kind == BoundaryKind::robin) {
      robin_h[f] = compile_formula(deck, config.faces[f].h, data_vars);
      robin_range[f] = check_robin_h(deck, *robin_h[f], slab, f, comm);
    }
  }
  s.forcing = std::make_unique<physics::FormulaForcing<T>>(slab.local, std::move(source), std::move(faces),
                                                            std::move(robin_h));
  for (int f = 0; f < 6; ++f) s.forcing->set_robin_h_range(f, robin_range[f]);
  if (config.exact)
    s.exact = std::make_unique<physics::GridFormula<T>>(compile_formula(deck, *config.exact, data_vars), slab);
  return s;
}

template <class T>
void load_diffusivity(const io::Deck& deck, ProblemSetup<T>& problem, Backend<T>& backend) {
  if (!problem.diffusivity || problem.diffusion.backend_alpha) return;
  problem.alpha = backend.allocate(problem.diffusion.grid.size());
  problem.diffusivity->sample(0.0, problem.alpha.data(), backend);
  // Every rank learns of a bad node on any: the deck error is then the same on all.
  Communicator* comm = problem.distributed() ? problem.comm : nullptr;
  if (const auto sample = agree_on_sample(problem.diffusivity->first_non_finite(), comm))
    deck.fail("material.diffusivity", "the formula " + physics::describe(*sample));
  std::array<double, 2> range = problem.diffusivity->range();
  if (comm) {
    comm->allreduce_min(&range[0], 1);
    comm->allreduce_max(&range[1], 1);
  }
  if (!(range[0] > 0))
    deck.fail("material.diffusivity", fmt::format("the formula gives {:g} (its smallest value on the grid); "
                                                  "diffusivity must be positive",
                                                  range[0]));
  problem.diffusion.backend_alpha = problem.alpha.data();
  problem.diffusion.whole_alpha_range = range;
}

template <class T>
void require_loaded(const ProblemSetup<T>& problem) {
  if (problem.diffusivity && !problem.diffusion.backend_alpha)
    throw std::logic_error("material.diffusivity is a formula: load_diffusivity must sample it before the run");
}

template ProblemSetup<float> setup_problem(const io::Deck&, const io::RunConfig&, Communicator*);
template ProblemSetup<double> setup_problem(const io::Deck&, const io::RunConfig&, Communicator*);
template void load_diffusivity(const io::Deck&, ProblemSetup<float>&, Backend<float>&);
template void load_diffusivity(const io::Deck&, ProblemSetup<double>&, Backend<double>&);
template void require_loaded(const ProblemSetup<float>&);
template void require_loaded(const ProblemSetup<double>&);

}  // namespace adi3d::app
