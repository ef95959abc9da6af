// libFuzzer target: a deck and its --set overrides, as a user types them. The input is the
// deck text, then optionally a line "%%" and one override (KEY=VALUE) per line. Every
// input is read or refused with a DeckError (file, line, key); anything else (another
// exception, a sanitizer report, a crash or a hang) is a finding.
#include "io/deck.hpp"
#include "io/run_config.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find("\n%%\n");
  const std::string text = input.substr(0, split);
  std::vector<std::string> overrides;
  if (split != std::string::npos) {
    std::size_t at = split + 4;
    while (at <= input.size()) {
      const std::size_t end = std::min(input.find('\n', at), input.size());
      overrides.push_back(input.substr(at, end - at));
      at = end + 1;
    }
  }
  try {
    const adi3d::io::Deck deck = adi3d::io::Deck::parse(text, "fuzz.ini", overrides);
    static_cast<void>(adi3d::io::read_run_config(deck));
  } catch (const adi3d::io::DeckError&) {
  }
  return 0;
}
