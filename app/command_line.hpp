#pragma once
// Option parsing shared by the subcommands that take a deck.
#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace adi3d::app {

struct DeckArguments {
  std::string deck;
  std::vector<std::string> overrides;  // --set section.key=value
  bool quiet = false;
  bool verbose = false;  // run: where the seconds went (RunTimings)
  std::string restart;
};

// Parses "DECK [--set k=v ...]" plus the extra options; prints help and returns nullopt
// for --help; throws boost::program_options::error on bad usage.
std::optional<DeckArguments> parse_deck_arguments(const std::string& command,
                                                  const std::vector<std::string>& args,
                                                  const std::string& summary, bool run_options);

// The command that continues this run from `checkpoint`: the same deck and --set values
// (--quiet and --verbose kept, --restart replaced), under `mpirun -np P` for P > 1 ranks, quoted for a
// POSIX shell.
std::string restart_command(const DeckArguments& args, int ranks, const std::string& checkpoint);

}  // namespace adi3d::app
