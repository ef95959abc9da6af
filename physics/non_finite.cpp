#include "physics/non_finite.hpp"

#include <fmt/format.h>

namespace adi3d::physics {

std::string describe(const NonFiniteSample& s) {
  return fmt::format("gives {} at the node (x, y, z) = ({:.6g}, {:.6g}, {:.6g}), t = {:.6g}; formulas must be "
                     "finite wherever the grid samples them",
                     s.value, s.x, s.y, s.z, s.t);
}

}  // namespace adi3d::physics
