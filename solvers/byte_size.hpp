#pragma once
// A byte count for messages, in the unit that keeps three significant digits readable:
// "512 B", "5.70 KiB", "1.25 GiB".
#include <cstddef>
#include <cstdio>
#include <string>

namespace adi3d {

inline std::string byte_size(std::size_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) value /= 1024.0, ++unit;
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%zu B", bytes);
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

}  // namespace adi3d
