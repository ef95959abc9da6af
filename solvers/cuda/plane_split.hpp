#pragma once
// How kernels that stream z-planes through a ring (plane_ring.cuh: the planes stencil, the
// fused step's bulk x pass) split the planes among blocks. Plain C++, so that the unit
// tests check it without a GPU.
#include "solvers/host_device.hpp"

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

// Persistent blocks that share the (slab, plane) units of a grid evenly: the units, slab
// by slab, are cut into `blocks` runs of equal length (within one), and a block streams the
// planes of its run slab by slab, one ring for all (a run crosses a slab's end where the
// units do not divide evenly). Against whole ranges of a slab (ring_planes_per_block) it
// leaves no wave part-empty: 512^3 float on an H100, 34 slabs of 15 lines, 132 blocks: each
// streams 131-132 planes in one or two segments, where the ranges of 73 planes ran two
// waves on 106 SMs and one on 26.
struct PlaneRun {
  long long begin, end;  // units [begin, end): unit u is plane 1 + u % planes of slab u / planes
};
ADI3D_HD PlaneRun plane_run(int slabs, int planes, int blocks, int block) {
  const long long units = static_cast<long long>(slabs) * planes;
  return {units * block / blocks, units * (block + 1) / blocks};
}
// The segment of a run that starts at unit u: slab `slab`, planes kb..ke-1.
struct PlaneSegment {
  int slab, kb, ke;
};
ADI3D_HD PlaneSegment plane_segment(long long u, long long end, int planes) {
  const int slab = static_cast<int>(u / planes);
  const long long slab_begin = static_cast<long long>(slab) * planes;
  const long long seg_end = end < slab_begin + planes ? end : slab_begin + planes;
  return {slab, 1 + static_cast<int>(u - slab_begin), 1 + static_cast<int>(seg_end - slab_begin)};
}

}  // namespace adi3d::cuda
