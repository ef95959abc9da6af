#pragma once
// How the ranks of a run agree on something one of them found (a non-finite node, a
// damaged checkpoint plane, an output directory rank 0 could not make): the lowest rank
// that found it, and its message on every rank. Collective: every rank calls them alike.
#include "solvers/distributed/communicator.hpp"

#include <cstdint>
#include <string>

namespace adi3d::app {

// comm where it joins several ranks, else null (nothing to agree with).
inline Communicator* ranks_of(Communicator* comm) { return comm && comm->size() > 1 ? comm : nullptr; }

// The lowest rank that has a finding, or -1.
inline int lowest_rank_with(bool found, Communicator* comm) {
  double rank = found ? comm->rank() : comm->size();
  comm->allreduce_min(&rank, 1);
  return rank < comm->size() ? static_cast<int>(rank) : -1;
}

// root's s on every rank.
inline void broadcast_string(std::string& s, int root, Communicator* comm) {
  std::uint64_t length = s.size();
  comm->broadcast(&length, sizeof length, root);
  s.resize(length);
  comm->broadcast(s.data(), length, root);
}

// The lowest failing rank's message on every rank ("" where none failed); a rank's own
// failure is a non-empty `local`. comm may be null or one rank.
inline std::string first_failure(std::string local, Communicator* comm) {
  if (!(comm = ranks_of(comm))) return local;
  const int root = lowest_rank_with(!local.empty(), comm);
  if (root >= 0) broadcast_string(local, root, comm);
  return root >= 0 ? local : std::string();
}

}  // namespace adi3d::app
