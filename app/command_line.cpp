#include "app/command_line.hpp"

#include <iostream>

namespace po = boost::program_options;

namespace adi3d::app {
namespace {

std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-+=.,/:@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<DeckArguments> parse_deck_arguments(const std::string& command,
                                                  const std::vector<std::string>& args,
                                                  const std::string& summary, bool run_options) {
  DeckArguments out;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&out.overrides)->composing(),
      "override a deck value: --set section.key=value (repeatable)");
  if (run_options) {
    visible.add_options()("quiet,q", po::bool_switch(&out.quiet), "no progress display")(
        "verbose,v", po::bool_switch(&out.verbose),
        "also print where the run's seconds went (set-up, initial data, stepping, checks, output, errors)")(
        "restart", po::value<std::string>(&out.restart)->value_name("FILE"),
        "continue a heat run from a checkpoint (OUTPUT_DIR/checkpoint.h5)");
  }
  po::options_description all;
  all.add(visible).add_options()("deck", po::value<std::string>(&out.deck));
  po::positional_options_description positional;
  positional.add("deck", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: adi3d " << command << " DECK [options]\n\n" << summary << "\n\n" << visible;
    return std::nullopt;
  }
  po::notify(vm);
  if (out.deck.empty()) throw po::error("missing the deck file (adi3d " + command + " DECK)");
  return out;
}

std::string restart_command(const DeckArguments& args, int ranks, const std::string& checkpoint) {
  std::string out = ranks > 1 ? "mpirun -np " + std::to_string(ranks) + " adi3d run " : "adi3d run ";
  out += shell_quoted(args.deck);
  for (const std::string& set : args.overrides) out += " --set " + shell_quoted(set);
  if (args.quiet) out += " --quiet";
  if (args.verbose) out += " --verbose";
  return out + " --restart " + shell_quoted(checkpoint);
}

}  // namespace adi3d::app
