#pragma once
// The ranks that write one output file together, and the planes each holds (issue 38,
// parallel output). A one-rank run holds the whole grid and writes alone. In a distributed
// run every rank holds its owned z planes (a slab) and writes them itself: HDF5 through
// MPI-IO into the one file a single rank would write, VTK as a piece of its own under a
// .pvti that names them all. Writers receive fields of the rank's planes only.
#include "solvers/distributed/communicator.hpp"
#include "solvers/grid.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace adi3d::io {

struct OutputRanks {
  // The writers' communicator (the snapshot writer thread's own, so its collectives never
  // meet the stepping's); null: one process writes everything.
  std::shared_ptr<Communicator> comm;
  // Rank r holds the z planes [starts[r], starts[r + 1]); empty: one rank, all planes.
  std::vector<int> starts;

  bool shared() const { return comm && comm->size() > 1; }
  int rank() const { return comm ? comm->rank() : 0; }
  int size() const { return comm ? comm->size() : 1; }
  int first_plane() const { return starts.empty() ? 0 : starts[static_cast<std::size_t>(rank())]; }
  int planes(const Grid3& grid) const {
    return starts.empty() ? grid.n[2] : starts[static_cast<std::size_t>(rank()) + 1] - first_plane();
  }
  // The most planes any rank holds (collective writes take the same number of rounds).
  int most_planes(const Grid3& grid) const;
  // The values this rank holds: its planes of the grid.
  std::size_t values(const Grid3& grid) const {
    return static_cast<std::size_t>(planes(grid)) * static_cast<std::size_t>(grid.n[0]) *
           static_cast<std::size_t>(grid.n[1]);
  }
};

// Every rank of `comm` reporting whether its part of a collective output step failed:
// true when any did. Each rank calls it at the same point (a writer's agreement, so that
// no rank goes on to the next file while another has stopped).
bool any_rank_failed(const OutputRanks& ranks, bool failed);

}  // namespace adi3d::io
