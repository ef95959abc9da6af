// adi3d check DECK: everything run does before stepping, and nothing after.
#include "app/command_line.hpp"
#include "app/commands.hpp"
#include "app/problem_setup.hpp"

#include <cstdio>
#include <memory>

namespace adi3d::app {
namespace {

template <class T>
void check_setup(const io::Deck& deck, const io::RunConfig& config) {
  ProblemSetup<T> problem = setup_problem<T>(deck, config);
  const std::unique_ptr<Backend<T>> cpu = make_cpu_backend<T>();
  load_diffusivity(deck, problem, *cpu);
}

}  // namespace

int check_command(const std::vector<std::string>& args) {
  std::optional<DeckArguments> parsed;
  try {
    parsed = parse_deck_arguments("check", args, "Validates a deck (keys, values, formulas).", false);
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "adi3d check: %s\n", e.what());
    return kExitUsage;
  }
  if (!parsed) return kExitOk;
  try {
    const io::Deck deck = io::Deck::load(parsed->deck, parsed->overrides);
    const io::RunConfig config = io::read_run_config(deck);
    // The same set-up as a run (formulas compiled, diffusivity sampled: on the host's
    // threads here, whatever backend a run would take), no stepping.
    if (config.precision == io::Precision::f64)
      check_setup<double>(deck, config);
    else
      check_setup<float>(deck, config);
    const Grid3& g = config.grid;
    std::printf("%s: ok (%s, grid %d x %d x %d, %s)\n", config.deck_name.c_str(),
                io::to_string(config.problem), g.n[0], g.n[1], g.n[2], config.precision_name());
    return kExitOk;
  } catch (const io::DeckError& e) {
    std::fprintf(stderr, "adi3d: %s\n", e.what());
    return kExitUsage;
  }
}

}  // namespace adi3d::app
