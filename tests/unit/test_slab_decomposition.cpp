// The z split of distributed runs (solvers/distributed/slab_decomposition.hpp) and the
// partition method's reduced systems (reduced_system.hpp), without MPI: the ranks' parts
// of a line are solved here one after another and must give the whole line's solution.
#include "scoped_env.hpp"
#include "solvers/distributed/mpi_session.hpp"
#include "solvers/distributed/reduced_system.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/thomas.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace adi3d {
namespace {

Grid3 grid_with_nz(int nz) {
  Grid3 g;
  g.n = {4, 3, nz};
  g.lo = {0, 0, -1};
  g.h = {0.5, 0.5, 0.25};
  return g;
}

BoundarySpec z_kind(BoundaryKind kind) {
  BoundarySpec bc;
  bc.face[4] = bc.face[5] = kind;
  return bc;
}

TEST(SlabDecomposition, UnevenSplitCoversEveryPlaneOnce) {
  const Grid3 g = grid_with_nz(17);
  for (int ranks = 1; ranks <= 8; ++ranks) {
    int next = 0;
    for (int r = 0; r < ranks; ++r) {
      const SlabDecomposition s = decompose_slabs(g, z_kind(BoundaryKind::dirichlet), r, ranks);
      EXPECT_EQ(s.k_begin, next) << ranks << " ranks, rank " << r;
      EXPECT_GE(s.owned_planes(), 17 / ranks);
      EXPECT_LE(s.owned_planes(), 17 / ranks + 1);
      EXPECT_EQ(s.rank_below, r > 0 ? r - 1 : -1);
      EXPECT_EQ(s.rank_above, r + 1 < ranks ? r + 1 : -1);
      EXPECT_EQ(s.local.n[2], s.owned_planes() + s.ghost_lo + s.ghost_hi);
      // The first local plane sits at its own z, ghost or owned.
      EXPECT_DOUBLE_EQ(s.local.lo[2], g.coord(2, s.k_begin - s.ghost_lo));
      EXPECT_EQ(s.local_bc.face[4] == BoundaryKind::dirichlet, true);
      EXPECT_EQ(s.interface(4), r > 0);
      EXPECT_EQ(s.interface(5), r + 1 < ranks);
      next = s.k_end;
    }
    EXPECT_EQ(next, 17);
  }
}

TEST(SlabDecomposition, PeriodicAxisWrapsItsNeighboursAndGhosts) {
  const Grid3 g = grid_with_nz(9);
  const SlabDecomposition first = decompose_slabs(g, z_kind(BoundaryKind::periodic), 0, 3);
  const SlabDecomposition last = decompose_slabs(g, z_kind(BoundaryKind::periodic), 2, 3);
  EXPECT_EQ(first.rank_below, 2);
  EXPECT_EQ(last.rank_above, 0);
  EXPECT_EQ(first.whole_plane(0), 8);  // the ghost below plane 0 is plane 8
  EXPECT_EQ(last.whole_plane(last.local.n[2] - 1), 0);
  EXPECT_EQ(first.local_bc.face[4], BoundaryKind::dirichlet);
  EXPECT_EQ(first.local_bc.face[5], BoundaryKind::dirichlet);
  const SlabDecomposition pair = decompose_slabs(g, z_kind(BoundaryKind::periodic), 1, 2);
  EXPECT_EQ(pair.rank_below, 0);
  EXPECT_EQ(pair.rank_above, 0);
}

TEST(SlabDecomposition, OneRankIsTheWholeGrid) {
  const Grid3 g = grid_with_nz(5);
  const SlabDecomposition s = decompose_slabs(g, z_kind(BoundaryKind::neumann), 0, 1);
  EXPECT_FALSE(s.distributed());
  EXPECT_EQ(s.local.n, g.n);
  EXPECT_EQ(s.local_bc.face[4], BoundaryKind::neumann);
  EXPECT_EQ(s.owned_offset(), 0u);
  EXPECT_EQ(s.owned_size(), g.size());
}

TEST(SlabDecomposition, TooManyRanksNamesTheLimit) {
  const Grid3 g = grid_with_nz(9);
  try {
    decompose_slabs(g, z_kind(BoundaryKind::dirichlet), 0, 5);
    FAIL() << "5 ranks on 9 planes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 4 ranks"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(decompose_slabs(g, z_kind(BoundaryKind::dirichlet), 3, 4));
}

// A random diagonally dominant line of n rows, split over the ranks of `slab` decompositions
// of a grid with nz = n: each rank solves its part with zero ghost rows (y) and unit ghost
// rows (v, w) by Thomas, the reduced systems give the ghosts, and y + v x_below + w x_above
// must be the whole line's solution. Lines of several columns check the per-line layout.
void check_partition(int n, int ranks, bool periodic, bool per_line) {
  std::mt19937 rng(1234u + static_cast<unsigned>(n * 31 + ranks * 7 + periodic));
  std::uniform_real_distribution<double> off(-1.0, 1.0), rhs(-1.0, 1.0);
  const int lines = 3;
  // Row i: a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i], the same matrix for every line
  // unless per_line (then line q scales its off-diagonals by (1 + q)/lines).
  std::vector<double> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = off(rng);
    c[i] = off(rng);
    b[i] = 2.2 + std::abs(a[i]) + std::abs(c[i]);
  }
  if (!periodic) a[0] = c[n - 1] = 0;
  auto coefficient = [&](const std::vector<double>& v, int i, int q) { return per_line ? v[i] * (1.0 + q) / lines : v[i]; };
  std::vector<std::vector<double>> d(lines, std::vector<double>(n)), exact(lines);
  for (auto& line : d)
    for (double& x : line) x = rhs(rng);
  for (int q = 0; q < lines; ++q) {
    std::vector<double> aq(n), cq(n), cp(n), bb(n), z(n);
    for (int i = 0; i < n; ++i) {
      aq[i] = coefficient(a, i, q);
      cq[i] = coefficient(c, i, q);
    }
    exact[q] = d[q];
    if (periodic)
      cyclic_thomas_solve(n, aq.data(), b.data(), cq.data(), exact[q].data(), cp.data(), bb.data(), z.data());
    else
      thomas_solve(n, aq.data(), b.data(), cq.data(), exact[q].data(), cp.data());
  }

  Grid3 g = grid_with_nz(n);
  const BoundarySpec bc = z_kind(periodic ? BoundaryKind::periodic : BoundaryKind::dirichlet);
  const std::size_t plane = lines;
  ReducedLines layout;
  layout.plane = plane;
  layout.per_line = per_line;
  layout.ranks = ranks;
  layout.periodic = periodic;
  std::vector<std::vector<double>> y(ranks), v(ranks), w(ranks);
  std::vector<double> messages(layout.message_size() * ranks);
  std::vector<SlabDecomposition> slabs;
  // Each rank's local system: its owned rows, and identity rows for its ghosts.
  auto local_solve = [&](const SlabDecomposition& s, int q, std::vector<double> rhs_local) {
    const int nl = s.local.n[2];
    std::vector<double> al(nl, 0), bl(nl, 1), cl(nl, 0), cp(nl);
    for (int k = s.ghost_lo; k < nl - s.ghost_hi; ++k) {
      const int i = s.whole_plane(k);
      al[k] = k > 0 ? coefficient(a, i, q) : 0;
      bl[k] = b[i];
      cl[k] = k + 1 < nl ? coefficient(c, i, q) : 0;
    }
    thomas_solve(nl, al.data(), bl.data(), cl.data(), rhs_local.data(), cp.data());
    return rhs_local;
  };
  for (int r = 0; r < ranks; ++r) {
    slabs.push_back(decompose_slabs(g, bc, r, ranks));
    const SlabDecomposition& s = slabs.back();
    const int nl = s.local.n[2], first = s.ghost_lo, last = nl - 1 - s.ghost_hi;
    double* m = messages.data() + r * layout.message_size();
    y[r].assign(static_cast<std::size_t>(nl) * lines, 0);
    v[r] = w[r] = y[r];
    for (int q = 0; q < lines; ++q) {
      std::vector<double> rl(nl, 0), unit_lo(nl, 0), unit_hi(nl, 0);
      for (int k = first; k <= last; ++k) rl[k] = d[q][s.whole_plane(k)];
      if (s.ghost_lo) unit_lo[0] = 1;
      if (s.ghost_hi) unit_hi[nl - 1] = 1;
      const std::vector<double> yq = local_solve(s, q, rl);
      const std::vector<double> vq = s.ghost_lo ? local_solve(s, q, unit_lo) : unit_lo;
      const std::vector<double> wq = s.ghost_hi ? local_solve(s, q, unit_hi) : unit_hi;
      for (int k = 0; k < nl; ++k) {
        y[r][k * lines + q] = yq[k];
        v[r][k * lines + q] = vq[k];
        w[r][k * lines + q] = wq[k];
      }
      m[layout.y_first() + q] = yq[first];
      m[layout.y_last() + q] = yq[last];
      const std::size_t at = per_line ? static_cast<std::size_t>(q) : 0;
      m[layout.v_first() + at] = vq[first];
      m[layout.v_last() + at] = vq[last];
      m[layout.w_first() + at] = wq[first];
      m[layout.w_last() + at] = wq[last];
    }
  }
  for (int r = 0; r < ranks; ++r) {
    const SlabDecomposition& s = slabs[r];
    std::vector<double> below(plane), above(plane);
    ReducedLines mine = layout;
    mine.me = r;
    solve_reduced_systems(mine, messages.data(), below.data(), above.data());
    for (int k = s.ghost_lo; k < s.local.n[2] - s.ghost_hi; ++k)
      for (int q = 0; q < lines; ++q) {
        const std::size_t p = k * plane + q;
        const double x = y[r][p] + v[r][p] * below[q] + w[r][p] * above[q];
        EXPECT_NEAR(x, exact[q][s.whole_plane(k)], 1e-13)
            << "n " << n << ", " << ranks << " ranks, rank " << r << ", plane " << s.whole_plane(k) << ", line " << q
            << (periodic ? ", periodic" : "") << (per_line ? ", per line" : "");
      }
  }
}

// What a build without MPI checks before it runs a deck: how many ranks the launcher made.
TEST(MpiSession, LauncherRankCountFromTheEnvironment) {
  test::ScopedEnv ompi("OMPI_COMM_WORLD_SIZE", nullptr), pmi("PMI_SIZE", nullptr), pmix("PMIX_SIZE", nullptr),
      local("MPI_LOCALNRANKS", nullptr), slurm("SLURM_NTASKS", nullptr);
  EXPECT_EQ(launcher_rank_count(), 1);
  EXPECT_FALSE(started_by_launcher());
  {
    test::ScopedEnv three("OMPI_COMM_WORLD_SIZE", "3");
    EXPECT_EQ(launcher_rank_count(), 3);
    EXPECT_TRUE(started_by_launcher());
  }
  test::ScopedEnv two("PMI_SIZE", "2");
  EXPECT_EQ(launcher_rank_count(), 2);
}

// A process started alone runs as one rank without starting MPI (its start-up saved);
// under a launcher, even of one rank, MPI starts.
TEST(MpiSession, OneRankWithoutALauncher) {
  test::ScopedEnv ompi("OMPI_COMM_WORLD_SIZE", nullptr), pmi("PMI_SIZE", nullptr), pmix("PMIX_SIZE", nullptr),
      local("MPI_LOCALNRANKS", nullptr), slurm("SLURM_NTASKS", nullptr);
  int argc = 1;
  char name[] = "adi3d";
  char* args[] = {name, nullptr};
  char** argv = args;
  MpiSession session(&argc, &argv);
  EXPECT_EQ(session.size(), 1);
  EXPECT_EQ(session.rank(), 0);
  EXPECT_EQ(session.local_size(), 1);
  double value = 2.5;
  session.world().allreduce_max(&value, 1);
  EXPECT_EQ(value, 2.5);
}

TEST(ReducedSystem, PartitionedLinesEqualTheWholeLine) {
  for (bool periodic : {false, true})
    for (bool per_line : {false, true})
      for (int ranks = 2; ranks <= 9; ++ranks)
        for (int n : {2 * ranks, 2 * ranks + 1, 23}) check_partition(n, ranks, periodic, per_line);
}

}  // namespace
}  // namespace adi3d
