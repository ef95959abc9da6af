#pragma once
// Slabs along z (DESIGN.md §7): which planes of the whole grid a rank owns, its neighbours,
// and the rank's grid: its owned planes plus one ghost plane on each side that has a
// neighbour. On that grid a ghost plane is a Dirichlet face for the kernels (their rows
// are identity rows, their values the neighbour's), so every single-device kernel runs
// unchanged on a slab; the distributed backend fills the ghosts and couples the z lines.
// Plain C++: no MPI here, so that the split is checked without it.
#include "solvers/boundary.hpp"
#include "solvers/grid.hpp"

#include <array>
#include <cstddef>

namespace adi3d {

struct SlabDecomposition {
  Grid3 whole;             // the deck's grid
  BoundarySpec whole_bc;   // the deck's faces
  int rank = 0;
  int ranks = 1;
  int k_begin = 0;         // owned planes [k_begin, k_end) of the whole grid
  int k_end = 0;
  int ghost_lo = 0;        // ghost planes below and above the owned ones (0 or 1)
  int ghost_hi = 0;
  int rank_below = -1;     // the neighbours' ranks (-1: a face of the whole grid)
  int rank_above = -1;
  Grid3 local;             // ghost and owned planes; lo[2] at the first of them
  BoundarySpec local_bc;   // Dirichlet where a neighbour's planes are

  bool distributed() const { return ranks > 1; }
  int owned_planes() const { return k_end - k_begin; }
  std::size_t plane() const { return static_cast<std::size_t>(local.n[0]) * static_cast<std::size_t>(local.n[1]); }
  // Offset of the first owned value in a local array, and the number of owned values.
  std::size_t owned_offset() const { return static_cast<std::size_t>(ghost_lo) * plane(); }
  std::size_t owned_size() const { return static_cast<std::size_t>(owned_planes()) * plane(); }
  // Whether a face of the rank's grid is a neighbour's ghost plane (no data of its own).
  bool interface(int face) const {
    return face == face_index(2, 0) ? ghost_lo > 0 : face == face_index(2, 1) ? ghost_hi > 0 : false;
  }
  // The whole grid's plane behind a local plane (ghosts of a periodic axis wrap around).
  int whole_plane(int local_k) const;
};

// The single-rank case: the whole grid, no ghosts.
SlabDecomposition whole_grid_slab(const Grid3& whole, const BoundarySpec& bc);

// Splits nz planes over `ranks` ranks as evenly as they go (the first nz % ranks ranks take
// one more). Every rank needs at least two planes (its interface rows must not be one
// another's): throws std::invalid_argument naming the counts where nz < 2 ranks.
SlabDecomposition decompose_slabs(const Grid3& whole, const BoundarySpec& bc, int rank, int ranks);

}  // namespace adi3d
