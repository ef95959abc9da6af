#include "app/problem_setup.hpp"

#include "io/field_input.hpp"
#include "physics/grid_functions.hpp"

#include <fmt/format.h>

namespace adi3d::app {

physics::Formula compile_formula(const io::Deck& deck, const io::FormulaText& text,
                                 const std::vector<std::string>& variables) {
  try {
    return physics::Formula(text.text, variables);
  } catch (const physics::FormulaError& e) {
    deck.fail(text.key, fmt::format("bad formula at position {}: {}", e.position() + 1, e.what()));
  }
}

template <class T>
ProblemSetup<T> setup_problem(const io::Deck& deck, const io::RunConfig& config) {
  const std::vector<std::string> space{"x", "y", "z"}, space_time{"x", "y", "z", "t"};
  ProblemSetup<T> s;
  s.diffusion.grid = config.grid;
  s.diffusion.bc = config.bc;
  s.diffusion.alpha = config.diffusivity.values;
  switch (config.diffusivity.kind) {
    case io::DiffusivityConfig::Kind::constant:
      break;
    case io::DiffusivityConfig::Kind::formula: {
      const physics::Formula alpha = compile_formula(deck, config.diffusivity.formula, space);
      s.diffusion.alpha_field.resize(config.grid.size());
      physics::sample_grid(alpha, config.grid, 0.0, s.diffusion.alpha_field.data());
      for (T v : s.diffusion.alpha_field)
        if (!(v > T(0)))
          deck.fail("material.diffusivity", fmt::format("the formula gives {} somewhere on the grid; "
                                                        "diffusivity must be positive", v));
      break;
    }
    case io::DiffusivityConfig::Kind::hdf5: {
      std::vector<double> values;
      try {
        values = io::read_grid_dataset(config.diffusivity.file, config.diffusivity.dataset, config.grid);
      } catch (const std::exception& e) {
        deck.fail("material.diffusivity", e.what());
      }
      s.diffusion.alpha_field.assign(values.begin(), values.end());
      for (std::size_t p = 0; p < values.size(); ++p)
        if (!(values[p] > 0))
          deck.fail("material.diffusivity", fmt::format("the dataset holds {} at node {} (x fastest); "
                                                        "diffusivity must be positive", values[p], p));
      break;
    }
  }

  // A steady problem's data cannot depend on time.
  const std::vector<std::string>& data_vars =
      config.problem == io::ProblemType::poisson ? space : space_time;
  s.initial = compile_formula(deck, config.initial, space);
  physics::Formula source = compile_formula(deck, config.source, data_vars);
  std::array<std::optional<physics::Formula>, 6> faces;
  for (int f = 0; f < 6; ++f)
    if (config.faces[f].kind != BoundaryKind::periodic)
      faces[f] = compile_formula(deck, config.faces[f].value, data_vars);
  s.forcing = std::make_unique<physics::FormulaForcing<T>>(config.grid, std::move(source),
                                                            std::move(faces));
  if (config.exact) s.exact = compile_formula(deck, *config.exact, data_vars);
  return s;
}

template ProblemSetup<float> setup_problem(const io::Deck&, const io::RunConfig&);
template ProblemSetup<double> setup_problem(const io::Deck&, const io::RunConfig&);

}  // namespace adi3d::app
