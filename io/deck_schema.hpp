#pragma once
// Every key a deck may contain, with its default and a line of help. The single list that
// the parser checks against, `adi3d check` reports from and the README documents.
#include <string>
#include <vector>

namespace adi3d::io {

struct KeySpec {
  const char* key;
  bool required;
  const char* default_value;  // shown in help; "" when none
  const char* help;
};

const std::vector<KeySpec>& deck_schema();
const KeySpec* find_key(const std::string& key);

}  // namespace adi3d::io
