#include "io/output_ranks.hpp"

#include <algorithm>

namespace adi3d::io {

int OutputRanks::most_planes(const Grid3& grid) const {
  if (starts.empty()) return grid.n[2];
  int most = 0;
  for (std::size_t r = 0; r + 1 < starts.size(); ++r) most = std::max(most, starts[r + 1] - starts[r]);
  return most;
}

bool any_rank_failed(const OutputRanks& ranks, bool failed) {
  if (!ranks.shared()) return failed;
  double flag = failed ? 1.0 : 0.0;
  ranks.comm->allreduce_max(&flag, 1);
  return flag > 0;
}

}  // namespace adi3d::io
