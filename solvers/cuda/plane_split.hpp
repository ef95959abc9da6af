#pragma once
// How kernels that stream z-planes through a ring (plane_ring.cuh: the planes stencil, the
// fused step's bulk x pass) split the planes among blocks. Plain C++, so that the unit
// tests check it without a GPU.
#include <algorithm>

namespace adi3d::cuda {

// Planes per block of a grid of `tiles` row slabs times ranges of z-planes, `resident`
// blocks at a time, for kernels that stream the planes of their range through a ring.
// A range costs its planes and about 3 more (two halo planes loaded, the ring's fill);
// blocks run in waves. The fewest ranges whose waves x cost is within 3% of the least: one
// range per slab while slabs outnumber half the SMs left a wave part-empty (640^3 float,
// 80 slabs of 8 x lines on 132 SMs: 61% of them busy).
inline int ring_planes_per_block(int tiles, int planes, int resident) {
  if (tiles < 1 || planes < 1 || resident < 1) return planes > 1 ? planes : 1;
  auto cost = [&](int kseg) {
    const long long blocks = static_cast<long long>(tiles) * ((planes + kseg - 1) / kseg);
    return static_cast<double>((blocks + resident - 1) / resident) * (kseg + 3);
  };
  double best = cost(planes);
  for (int split = 2; split <= planes; ++split) best = std::min(best, cost((planes + split - 1) / split));
  for (int split = 1;; ++split) {
    const int kseg = (planes + split - 1) / split;
    if (cost(kseg) <= 1.03 * best) return kseg;
  }
}

}  // namespace adi3d::cuda
