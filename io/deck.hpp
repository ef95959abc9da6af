#pragma once
// The input deck: an INI file read with Boost.Program_options (sections become
// `section.key`), plus `--set section.key=value` overrides. Every key is checked against
// the schema (deck_schema.hpp); errors name the file, the line and the key, and suggest
// the closest valid key. Typed access is ParmParse-like: get() for required keys, query()
// for optional ones, validation where the value is read.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d::io {

// A user-facing error: one line that says what is wrong and where.
class DeckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DeckEntry {
  std::string value;
  std::string origin;  // "deck.ini:12" or "--set"
};

class Deck {
 public:
  // Reads and checks a deck file and applies overrides ("section.key=value").
  static Deck load(const std::string& path, const std::vector<std::string>& overrides = {});
  // Same, from text already in memory (tests, restart metadata); `name` is used in messages.
  static Deck parse(const std::string& text, const std::string& name,
                    const std::vector<std::string>& overrides = {});

  bool has(const std::string& key) const { return entries_.count(key) != 0; }
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }  // the file as read
  // The deck as applied: file text followed by the overrides, for metadata.
  std::string effective_text() const;

  std::string get_string(const std::string& key) const;
  std::optional<std::string> query_string(const std::string& key) const;
  double get_double(const std::string& key) const;
  std::optional<double> query_double(const std::string& key) const;
  long get_int(const std::string& key) const;
  std::optional<long> query_int(const std::string& key) const;
  // Whitespace-separated numbers (e.g. grid.n = 65 33 17).
  std::vector<double> get_doubles(const std::string& key) const;

  // "deck.ini:12" for a key given in the file, "--set" for an override, the file name for
  // a key that is absent.
  std::string where(const std::string& key) const;
  // Throws DeckError "<where>: <key> = '<value>': <message>".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const DeckEntry& require(const std::string& key) const;

  std::string path_;
  std::string text_;
  std::vector<std::string> overrides_;
  std::map<std::string, DeckEntry> entries_;
};

// Closest schema key to `key` by edit distance, or "" when nothing is close.
std::string closest_key(const std::string& key);

}  // namespace adi3d::io
