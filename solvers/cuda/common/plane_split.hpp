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

// A task's stretch of the units: slab `slab`, planes kb..ke-1.
struct PlaneSegment {
  int slab, kb, ke;
};

// Aligned tasks, for persistent blocks (the one-kernel variable x pass and its planes
// stencil): the (slab, plane) units cut into tasks of one slab and one group of planes
// (task t: group t / slabs, slab t % slabs), taken by `blocks` blocks in turn (block b:
// tasks b, b + blocks, ...). The tasks of a wave start together on the first plane of
// their group, so that blocks on neighbouring slabs go through the same planes at the
// same time and a slab's halo rows, which its neighbours read too, come from L2. Where
// the tasks do not fill the last wave, those left (the last in that order) are each cut
// again into `split` tasks of consecutive planes, so that the last wave keeps the blocks
// busy: task full + r split + c is part c of task full + r.
// 512^3 on an H100 (adi3d bench gpu, 2026-11-24), against runs of equal length per block
// (which drifted apart by up to a run: the float alpha stencil read 13% more than its two
// arrays from DRAM, L2 hit rate 43%), and against aligned tasks without the split: float
// alpha stencil 0.709 / 0.624 -> 0.619 ms (76 / 86 -> 87% of copy), material index 0.512
// / 0.498 -> 0.484; double material index 0.983 / 0.879 -> 0.877; float alpha step 2.215 /
// 2.188 -> 2.165, double material step 3.229 / 3.168 -> 3.158.
struct PlaneTasks {
  int groups;  // of planes
  int blocks;  // persistent blocks to launch (at most `resident`)
  int full;    // tasks of the whole waves (a multiple of blocks)
  int split;   // parts of each task after them
  int slabs, planes;
  ADI3D_HD long long count() const { return full + (static_cast<long long>(slabs) * groups - full) * split; }
  // Task t's segment (slab, planes kb..ke-1).
  ADI3D_HD PlaneSegment segment(long long t) const {
    int part = 0, parts = 1;
    if (t >= full) {
      part = static_cast<int>((t - full) % split);
      parts = split;
      t = full + (t - full) / split;
    }
    const int g = static_cast<int>(t / slabs), slab = static_cast<int>(t % slabs);
    const int first = static_cast<int>(static_cast<long long>(planes) * g / groups);
    const int size = static_cast<int>(static_cast<long long>(planes) * (g + 1) / groups) - first;
    const int kb = first + static_cast<int>(static_cast<long long>(size) * part / parts);
    const int ke = first + static_cast<int>(static_cast<long long>(size) * (part + 1) / parts);
    return {slab, 1 + kb, 1 + ke};
  }
};
// The groups whose waves cost least: a task costs its planes and about 3 more (two halo
// planes loaded, the ring's fill); the fewest groups among equal costs.
inline PlaneTasks plane_tasks(int slabs, int planes, int resident) {
  if (slabs < 1 || planes < 1 || resident < 1) return {1, 1, 0, 1, slabs < 1 ? 1 : slabs, planes < 1 ? 1 : planes};
  constexpr long long kTaskPlanes = 3;
  PlaneTasks best{};
  long long best_cost = -1;
  for (int g = 1; g <= planes; ++g) {
    const long long tasks = static_cast<long long>(slabs) * g;
    const long long group = (planes + g - 1) / g;
    const long long waves = tasks / resident, rest = tasks % resident;
    // parts of at least one plane (the smallest group has planes / g)
    const long long split = rest == 0 ? 1 : std::max<long long>(1, std::min<long long>(resident / rest, planes / g));
    const long long cost = waves * (group + kTaskPlanes) + (rest == 0 ? 0 : (group + split - 1) / split + kTaskPlanes);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      const long long used = waves > 0 ? resident : rest * split;
      best = {g, static_cast<int>(used), static_cast<int>(waves * resident), static_cast<int>(split), slabs, planes};
    }
  }
  return best;
}

}  // namespace adi3d::cuda
