#include "io/deck.hpp"

#include "io/deck_schema.hpp"

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace po = boost::program_options;

namespace adi3d::io {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& key) {
  const std::string best = closest_key(key);
  return best.empty() ? "" : fmt::format("; did you mean '{}'?", best);
}

// Where each key sits in the file, and the syntax errors Boost would report without a line.
std::map<std::string, int> scan_lines(const std::string& text, const std::string& name) {
  std::map<std::string, int> lines;
  std::istringstream in(text);
  std::string raw, section;
  for (int number = 1; std::getline(in, raw); ++number) {
    std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']')
        throw DeckError(fmt::format("{}:{}: malformed section header '{}'", name, number, line));
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw DeckError(fmt::format("{}:{}: expected 'key = value', got '{}'", name, number, line));
    const std::string key = trim(line.substr(0, eq));
    const std::string full = section.empty() ? key : section + "." + key;
    if (key.empty()) throw DeckError(fmt::format("{}:{}: missing key before '='", name, number));
    if (!find_key(full))
      throw DeckError(fmt::format("{}:{}: unknown key '{}'{}", name, number, full, suggestion(full)));
    if (lines.count(full))
      throw DeckError(fmt::format("{}:{}: key '{}' is already set on line {}", name, number, full,
                                  lines[full]));
    lines[full] = number;
  }
  return lines;
}

po::options_description schema_options() {
  po::options_description desc;
  for (const KeySpec& spec : deck_schema()) desc.add_options()(spec.key, po::value<std::string>());
  return desc;
}

}  // namespace

std::string closest_key(const std::string& key) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, key.size() / 3) + 1;
  for (const KeySpec& spec : deck_schema()) {
    const std::size_t d = edit_distance(key, spec.key);
    if (d < best_distance) {
      best_distance = d;
      best = spec.key;
    }
  }
  return best;
}

Deck Deck::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DeckError(fmt::format("{}: cannot open deck: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, overrides);
}

Deck Deck::parse(const std::string& text, const std::string& name,
                 const std::vector<std::string>& overrides) {
  Deck deck;
  deck.path_ = name;
  deck.text_ = text;
  deck.overrides_ = overrides;
  const std::map<std::string, int> lines = scan_lines(text, name);

  std::istringstream in(text);
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(in, schema_options(), false);
  } catch (const po::error& e) {
    throw DeckError(fmt::format("{}: {}", name, e.what()));
  }
  for (const po::option& opt : parsed.options) {
    const auto line = lines.find(opt.string_key);
    const std::string origin =
        fmt::format("{}:{}", name, line == lines.end() ? 0 : line->second);
    deck.entries_[opt.string_key] = {opt.value.empty() ? "" : trim(opt.value.front()), origin};
  }

  for (const std::string& set : overrides) {
    const auto eq = set.find('=');
    if (eq == std::string::npos)
      throw DeckError(fmt::format("--set {}: expected section.key=value", set));
    const std::string key = trim(set.substr(0, eq));
    if (!find_key(key))
      throw DeckError(fmt::format("--set {}: unknown key '{}'{}", set, key, suggestion(key)));
    deck.entries_[key] = {trim(set.substr(eq + 1)), "--set"};
  }

  for (const KeySpec& spec : deck_schema())
    if (spec.required && !deck.has(spec.key)) {
      const std::string key = spec.key;
      const auto dot = key.find('.');
      throw DeckError(fmt::format("{}: missing required key '{}' (section [{}], key '{}'): {}", name,
                                  key, key.substr(0, dot), key.substr(dot + 1), spec.help));
    }
  return deck;
}

std::string Deck::effective_text() const {
  std::string out = text_;
  if (!overrides_.empty()) {
    out += "\n# command-line overrides\n";
    for (const std::string& set : overrides_) out += "# --set " + set + "\n";
  }
  return out;
}

const DeckEntry& Deck::require(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    const auto dot = key.find('.');
    throw DeckError(fmt::format("{}: missing required key '{}' (section [{}], key '{}')", path_, key,
                                key.substr(0, dot), key.substr(dot + 1)));
  }
  return it->second;
}

std::string Deck::where(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? path_ : it->second.origin;
}

void Deck::fail(const std::string& key, const std::string& message) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) throw DeckError(fmt::format("{}: {}: {}", path_, key, message));
  throw DeckError(fmt::format("{}: {} = '{}': {}", it->second.origin, key, it->second.value, message));
}

std::string Deck::get_string(const std::string& key) const { return require(key).value; }

std::optional<std::string> Deck::query_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::vector<double> Deck::get_doubles(const std::string& key) const {
  std::istringstream words(require(key).value);
  std::vector<double> values;
  std::string word;
  while (words >> word) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(word.c_str(), &end);
    if (end == word.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
      fail(key, fmt::format("'{}' is not a finite number", word));
    values.push_back(v);
  }
  if (values.empty()) fail(key, "expected a number");
  return values;
}

double Deck::get_double(const std::string& key) const {
  const std::vector<double> values = get_doubles(key);
  if (values.size() != 1) fail(key, "expected one number");
  return values.front();
}

std::optional<double> Deck::query_double(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_double(key);
}

long Deck::get_int(const std::string& key) const {
  const std::string& text = require(key).value;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) fail(key, "expected an integer");
  return v;
}

std::optional<long> Deck::query_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}

}  // namespace adi3d::io
