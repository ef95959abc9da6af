#pragma once
// A rank's slab of a whole-grid host field (a checkpoint's u, an HDF5 diffusivity): its
// ghost and owned planes, a periodic axis's ghosts taken from the planes they wrap to.
#include "solvers/distributed/slab_decomposition.hpp"

#include <algorithm>
#include <vector>

namespace adi3d {

template <class T, class From>
std::vector<T> local_slab(const SlabDecomposition& slab, const From* whole) {
  const std::size_t plane = slab.plane();
  std::vector<T> local(slab.local.size());
  for (int k = 0; k < slab.local.n[2]; ++k) {
    const From* from = whole + static_cast<std::size_t>(slab.whole_plane(k)) * plane;
    std::copy(from, from + plane, local.data() + static_cast<std::size_t>(k) * plane);
  }
  return local;
}

}  // namespace adi3d
