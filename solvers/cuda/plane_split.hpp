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

// Persistent blocks that share the (slab, plane) units of a grid evenly: the units are
// cut into `blocks` runs of equal length (within one), and a block streams the planes of
// its run segment by segment, one ring for all. The units go in groups of planes (group g:
// planes [planes g / groups, planes (g+1) / groups) of every slab), slab by slab within a
// group, plane by plane within a slab; a segment is a run's stretch of one slab in one
// group. With about one run per slab and group (plane_groups), the blocks on neighbouring
// slabs go through the same planes at about the same time, so that a slab's halo rows,
// which its neighbours read too, can come from L2 (512^3 on an H100: the double material x
// pass 0.97 -> 0.96 ms against runs slab by slab, float unchanged; the constant bulk x
// pass stays faster in ranges: docs/perf/step_experiments_h100.txt). Against ranges of
// planes per slab (ring_planes_per_block) no wave is left part-empty: 512^3 float on an
// H100, 34 slabs of 15 lines, 132 blocks: each streams 131-132 planes in one or two
// segments, where the ranges of 73 planes ran two waves on 106 SMs and one on 26.
struct PlaneRun {
  long long begin, end;  // units [begin, end)
};
ADI3D_HD PlaneRun plane_run(int slabs, int planes, int blocks, int block) {
  const long long units = static_cast<long long>(slabs) * planes;
  return {units * block / blocks, units * (block + 1) / blocks};
}
// Groups of planes for `blocks` runs over `slabs` slabs: the nearest whole number of runs
// per slab, 1 to planes.
ADI3D_HD int plane_groups(int slabs, int planes, int blocks) {
  const int g = slabs > 0 ? (blocks + slabs / 2) / slabs : 1;
  return g < 1 ? 1 : g > planes ? planes : g;
}
// The segment of a run that starts at unit u (run end: end): slab `slab`, planes kb..ke-1.
struct PlaneSegment {
  int slab, kb, ke;
};
ADI3D_HD PlaneSegment plane_segment(long long u, long long end, int planes, int slabs, int groups) {
  long long base = 0;  // the group's first unit
  int first = 0, count = planes;
  for (int g = 0; g < groups; ++g) {
    first = static_cast<int>(static_cast<long long>(planes) * g / groups);
    count = static_cast<int>(static_cast<long long>(planes) * (g + 1) / groups) - first;
    const long long units = static_cast<long long>(slabs) * count;
    if (u < base + units) break;
    base += units;
  }
  const int slab = static_cast<int>((u - base) / count);
  const int p = static_cast<int>((u - base) % count);
  const long long left = end - u;
  const int len = left < count - p ? static_cast<int>(left) : count - p;
  return {slab, 1 + first + p, 1 + first + p + len};
}

}  // namespace adi3d::cuda
