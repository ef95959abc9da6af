#include "solvers/distributed/slab_decomposition.hpp"

#include <stdexcept>
#include <string>

namespace adi3d {

int SlabDecomposition::whole_plane(int local_k) const {
  const int nz = whole.n[2];
  const int k = k_begin - ghost_lo + local_k;
  return ((k % nz) + nz) % nz;
}

SlabDecomposition whole_grid_slab(const Grid3& whole, const BoundarySpec& bc) {
  SlabDecomposition s;
  s.whole = whole;
  s.whole_bc = bc;
  s.k_end = whole.n[2];
  s.local = whole;
  s.local_bc = bc;
  return s;
}

SlabDecomposition decompose_slabs(const Grid3& whole, const BoundarySpec& bc, int rank, int ranks) {
  const int nz = whole.n[2];
  if (ranks < 1 || rank < 0 || rank >= ranks) throw std::invalid_argument("rank " + std::to_string(rank) + " of " + std::to_string(ranks));
  if (ranks == 1) return whole_grid_slab(whole, bc);
  if (nz < 2 * ranks)
    throw std::invalid_argument(std::to_string(ranks) + " ranks for " + std::to_string(nz) +
                                " planes along z: each rank needs at least 2 planes, so at most " +
                                std::to_string(nz / 2) + " ranks can share this grid");
  SlabDecomposition s;
  s.whole = whole;
  s.whole_bc = bc;
  s.rank = rank;
  s.ranks = ranks;
  const int base = nz / ranks, extra = nz % ranks;
  s.k_begin = rank * base + (rank < extra ? rank : extra);
  s.k_end = s.k_begin + base + (rank < extra ? 1 : 0);
  const bool periodic = bc.periodic(2);
  s.rank_below = rank > 0 ? rank - 1 : periodic ? ranks - 1 : -1;
  s.rank_above = rank + 1 < ranks ? rank + 1 : periodic ? 0 : -1;
  s.ghost_lo = s.rank_below >= 0 ? 1 : 0;
  s.ghost_hi = s.rank_above >= 0 ? 1 : 0;
  s.local = whole;
  s.local.n[2] = s.owned_planes() + s.ghost_lo + s.ghost_hi;
  s.local.lo[2] = whole.lo[2] + (s.k_begin - s.ghost_lo) * whole.h[2];
  s.local_bc = bc;
  if (s.ghost_lo) s.local_bc.face[face_index(2, 0)] = BoundaryKind::dirichlet;
  if (s.ghost_hi) s.local_bc.face[face_index(2, 1)] = BoundaryKind::dirichlet;
  return s;
}

}  // namespace adi3d
