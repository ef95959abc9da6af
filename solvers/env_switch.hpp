#pragma once
// The on/off environment switches of measuring and testing (ADI3D_BULK_COPIES,
// ADI3D_SPECTRAL_LINES, ADI3D_KRYLOV_SCALING): unset, empty or "on" is on; "off" is off;
// anything else is an error naming the variable, so that a mistyped switch never passes
// for the default.
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace adi3d {

inline bool env_switched_off(const char* name) {
  const char* v = std::getenv(name);
  const std::string value = v ? v : "";
  if (value.empty() || value == "on") return false;
  if (value == "off") return true;
  throw std::invalid_argument(std::string(name) + "='" + value + "': expected on or off");
}

}  // namespace adi3d
