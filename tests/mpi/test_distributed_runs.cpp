// Distributed runs against one rank (issue 37, item 6): every example deck's final field on
// all the ranks of this mpirun (z slabs, uneven where nz is not a multiple of the ranks)
// equals the one-rank run's within rounding: max |difference| <= 1e-12 (double) or 1e-5
// (float) relative to max |u|. The one-rank reference runs on rank 0 in the same process.
// CPU backend; the same test on GPUs runs on the multi-GPU machines (ADI3D_MPI_BACKEND).
#include "final_field.hpp"
#include "mpi_world.hpp"
#include "app/heat_run.hpp"
#include "app/poisson_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"
#include "solvers/distributed/distributed_backend.hpp"
#include "solvers/distributed/mpi_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace adi3d {
namespace {

using test::world;

BackendKind backend_kind() {
  const char* kind = std::getenv("ADI3D_MPI_BACKEND");
  return kind && std::string(kind) == "cuda" ? BackendKind::cuda : BackendKind::cpu;
}

template <class T>
std::unique_ptr<Backend<T>> local_backend(int rank_on_node) {
  return backend_kind() == BackendKind::cuda ? make_cuda_backend<T>(rank_on_node) : make_cpu_backend<T>();
}

template <class T>
struct FinalRun {
  std::vector<T> field;
  bool fused_slab = false;  // the last step was the local backend's fused slab step
};

// A deck run to its end on every rank of comm (or on this one alone: comm null).
// mixed: a double Poisson solve by float sweeps (solver.precision = mixed), to tol 1e-10.
template <class T>
FinalRun<T> final_run(const std::string& deck_name, std::vector<std::string> overrides, Communicator* comm,
                      bool mixed = false) {
  overrides.push_back("solver.backend=cpu");
  const char* precision = mixed ? "mixed" : std::is_same_v<T, float> ? "float" : "double";
  overrides.push_back(std::string("solver.precision=") + precision);
  if (std::is_same_v<T, float>) overrides.push_back("solver.tol=1e-5");  // what float reaches
  if (mixed) overrides.push_back("solver.tol=1e-10");
  const std::string path = std::string(ADI3D_SOURCE_DIR) + "/inputs/" + deck_name;
  // Split runs solve Poisson by ADI (the direct solve runs on one rank) unless the case
  // names a method: the one-rank reference solves alike, so that the two agree to rounding,
  // not to solver.tol.
  const bool names_method = std::any_of(overrides.begin(), overrides.end(),
                                        [](const std::string& o) { return o.rfind("solver.method=", 0) == 0; });
  if (io::read_run_config(io::Deck::load(path, overrides)).problem == io::ProblemType::poisson && !names_method)
    overrides.push_back("solver.method=adi");
  const io::Deck deck = io::Deck::load(path, overrides);
  const io::RunConfig config = io::read_run_config(deck);
  app::ProblemSetup<T> problem = app::setup_problem<T>(deck, config, comm);
  std::unique_ptr<Backend<T>> backend = local_backend<T>(comm ? comm->rank() : 0);
  if (problem.distributed())
    backend = std::make_unique<DistributedBackend<T>>(std::move(backend), problem.diffusion.slab, *comm);
  app::load_diffusivity(deck, problem, *backend);
  FinalField<T> capture(problem.diffusion.slab, problem.distributed() ? comm : nullptr);
  if (config.problem == io::ProblemType::heat) {
    app::run_heat(config, problem, *backend, false, &capture);
  } else {
    const app::PoissonResult r = app::run_poisson(config, problem, *backend, false, &capture);
    EXPECT_TRUE(r.report.converged) << deck_name;
  }
  return {std::move(capture.field), capture.fused_slab};
}

struct Case {
  const char* deck;
  std::vector<std::string> overrides;
  bool gpu_fused_slab = false;  // on several GPUs, the fused slab step must take it
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.deck;
  for (const std::string& o : c.overrides) *os << " " << o;
}

template <class T>
void expect_same_as_one_rank(const Case& c, double tolerance, bool mixed = false) {
  Communicator& comm = world();
  const FinalRun<T> run = final_run<T>(c.deck, c.overrides, &comm, mixed);
  if (c.gpu_fused_slab && comm.size() > 1 && backend_kind() == BackendKind::cuda) {
    EXPECT_TRUE(run.fused_slab) << c.deck << ": the z lines were not coupled by the fused slab step";
  }
  if (comm.rank() != 0) return;
  const std::vector<T>& distributed = run.field;
  const std::vector<T> reference = final_run<T>(c.deck, c.overrides, nullptr, mixed).field;
  ASSERT_EQ(distributed.size(), reference.size());
  double largest = 0, difference = 0;
  std::size_t worst = 0;
  for (std::size_t p = 0; p < reference.size(); ++p) {
    largest = std::max(largest, std::abs(static_cast<double>(reference[p])));
    const double d = std::abs(static_cast<double>(distributed[p]) - static_cast<double>(reference[p]));
    if (!(d <= difference)) {
      difference = d;
      worst = p;
    }
  }
  EXPECT_LE(difference, tolerance * largest)
      << c.deck << " on " << comm.size() << " ranks: node " << worst << " differs by " << difference
      << " (max |u| " << largest << ")";
}

class DistributedRun : public ::testing::TestWithParam<Case> {};

TEST_P(DistributedRun, DoubleEqualsOneRank) { expect_same_as_one_rank<double>(GetParam(), 1e-12); }
TEST_P(DistributedRun, FloatEqualsOneRank) { expect_same_as_one_rank<float>(GetParam(), 1e-5); }

// Small grids, few steps: nz of 17 and 13 split unevenly over 2, 3 and 4 ranks.
INSTANTIATE_TEST_SUITE_P(
    Decks, DistributedRun,
    ::testing::Values(
        Case{"heat_sine.ini", {"grid.n=17", "time.t_end=0.01"}},
        Case{"heat_manufactured.ini", {"grid.n=9 11 13", "time.t_end=0.1"}},
        Case{"heat_anisotropic.ini", {"grid.n=13 11 17", "time.t_end=0.01"}},
        Case{"heat_neumann.ini", {"grid.n=13", "time.t_end=0.05"}},
        Case{"heat_insulated.ini", {"grid.n=17", "time.t_end=0.01"}},
        Case{"heat_mixed.ini", {"grid.n=13 12 17", "time.t_end=0.05"}},
        Case{"heat_flux_decay.ini", {"grid.n=17", "time.t_end=0.01"}},
        Case{"heat_time_order.ini", {"time.t_end=0.2"}},
        Case{"heat_variable_alpha.ini", {"grid.n=17", "time.t_end=0.05"}},
        Case{"heat_variable_insulated.ini", {"grid.n=17", "time.t_end=0.05"}},
        Case{"heat_two_layer.ini", {"grid.n=8 8 17", "time.t_end=0.5"}},
        Case{"heat_periodic.ini", {"grid.n=16 16 17", "time.t_end=0.01"}},
        Case{"heat_periodic.ini",
             {"grid.n=16 16 16", "time.t_end=0.01", "boundary.z-=periodic", "boundary.z+=periodic"}},
        Case{"heat_variable_alpha.ini",
             {"grid.n=12 12 16", "time.t_end=0.05", "boundary.z-=periodic", "boundary.z+=periodic"}},
        // Robin faces: h fields on x-, x+ and z+ (every rank couples its z lines line by
        // line), one h over each face (the shared factors; with the Dirichlet face fixed,
        // on GPUs the fused slab step).
        Case{"heat_robin.ini", {"grid.n=13 11 17", "time.t_end=0.02"}},
        Case{"heat_robin.ini",
             {"grid.n=24 13 21", "time.t_end=0.02", "boundary.y-=dirichlet 2 + x*z",
              "boundary.x-=robin 2 ; exp(-t) * cos(y) * (2 + z) * ((1 + x + x^2) - (1 + 2*x) / 2)",
              "boundary.x+=robin 3 ; exp(-t) * cos(y) * (2 + z) * ((1 + x + x^2) + (1 + 2*x) / 3)",
              "boundary.z+=robin 0.5 ; exp(-t) * (1 + x + x^2) * cos(y) * ((2 + z) + 2)"},
             true},
        Case{"poisson_robin.ini", {"grid.n=17"}},
        Case{"poisson_dirichlet.ini", {"grid.n=17"}},
        Case{"poisson_neumann.ini", {"grid.n=17"}},
        Case{"poisson_periodic.ini", {"grid.n=16"}},
        Case{"slab_two_layer.ini", {"grid.n=6 6 17"}},
        // x rows of whole 16-byte units: on GPUs the fused slab step takes these (the
        // reduced systems beside the y pass), with Dirichlet, Neumann and periodic z faces,
        // a source, and lines of up to 96 and of 163-288 nodes (warp-solve chunks of 3 and 9).
        Case{"heat_sine.ini", {"grid.n=32 20 23", "time.t_end=0.01"}, true},
        Case{"heat_sine.ini", {"grid.n=192 12 22", "time.t_end=0.01"}, true},
        Case{"heat_neumann.ini", {"grid.n=24 13 21", "time.t_end=0.05"}, true},
        Case{"heat_insulated.ini", {"grid.n=20 16 19", "time.t_end=0.01"}, true},
        Case{"heat_manufactured.ini", {"grid.n=24 11 13", "time.t_end=0.1"}},
        Case{"heat_sine.ini",
             {"grid.n=16 12 16", "time.t_end=0.01", "boundary.z-=periodic", "boundary.z+=periodic"}, true}));

// solver.precision = mixed on several ranks: the double residual and the float sweeps are
// both split into the same slabs (two distributed backends). Both runs reach 1e-10; their
// float sweeps round differently (the partition method), which the double residual then
// corrects: the fields agree within 1e-11 of max |u| (measured: 1.4e-13 on 2 and 4 ranks).
class DistributedMixed : public ::testing::TestWithParam<Case> {};

TEST_P(DistributedMixed, EqualsOneRank) { expect_same_as_one_rank<double>(GetParam(), 1e-11, true); }

INSTANTIATE_TEST_SUITE_P(Decks, DistributedMixed,
                         ::testing::Values(Case{"poisson_dirichlet.ini", {"grid.n=17"}},
                                           Case{"poisson_neumann.ini", {"grid.n=17"}},
                                           Case{"poisson_periodic.ini", {"grid.n=16"}},
                                           Case{"poisson_neumann.ini",
                                                {"grid.n=13 12 17",
                                                 "material.diffusivity=formula 1 + 0.5*sin(pi*x)*cos(pi*y)"}},
                                           Case{"slab_two_layer.ini", {"grid.n=6 6 17"}}));

// solver.method = krylov on several ranks, preconditioned by a cycle of ADI steps (the
// direct solve runs on one rank), against the same on one rank, both to solver.tol =
// 1e-11: the iterations take the same steps up to rounding (the partition method's z
// solves, the inner products' sums), measured within 8.1e-16 of max |u| on 2 to 4 ranks.
class DistributedKrylov : public ::testing::TestWithParam<Case> {};

TEST_P(DistributedKrylov, EqualsOneRank) { expect_same_as_one_rank<double>(GetParam(), 1e-12); }

INSTANTIATE_TEST_SUITE_P(
    Decks, DistributedKrylov,
    ::testing::Values(Case{"chip_vias.ini", {"grid.n=16 16 17", "solver.method=krylov", "solver.preconditioner=adi",
                                                 "solver.tol=1e-11"}},
                      Case{"poisson_neumann.ini",
                           {"grid.n=13 12 17", "material.diffusivity=formula 1 + 0.5*sin(pi*x)*cos(pi*y)",
                            "solver.method=krylov", "solver.preconditioner=adi", "solver.tol=1e-11"}},
                      Case{"poisson_robin.ini",
                           {"grid.n=13", "material.diffusivity=formula 1 + 0.5*sin(pi*x)*cos(pi*y)",
                            "solver.method=krylov", "solver.preconditioner=adi", "solver.tol=1e-11"}}));

// A NaN on one rank makes every rank's norms NaN (MPI's max alone would drop it).
TEST(DistributedRun, ANanOnOneRankMakesEveryRanksNormsNan) {
  Communicator& comm = world();
  Grid3 whole;
  whole.n = {5, 4, 2 * comm.size() + 1};
  whole.h = {0.25, 0.25, 0.25};
  const SlabDecomposition slab = decompose_slabs(whole, BoundarySpec{}, comm.rank(), comm.size());
  std::unique_ptr<Backend<double>> backend = make_cpu_backend<double>();
  if (slab.distributed()) backend = std::make_unique<DistributedBackend<double>>(std::move(backend), slab, comm);
  std::vector<double> field(slab.local.size(), 1.0);
  if (comm.rank() == comm.size() - 1) field[slab.owned_offset() + 3] = std::numeric_limits<double>::quiet_NaN();
  const Norms norms = backend->difference_norms(field.data(), nullptr, field.size());
  EXPECT_TRUE(std::isnan(norms.max_abs)) << "rank " << comm.rank();
  EXPECT_TRUE(std::isnan(norms.sum_squares)) << "rank " << comm.rank();
  field[slab.owned_offset() + 3] = 1.0;
  const Norms finite = backend->difference_norms(field.data(), nullptr, field.size());
  EXPECT_EQ(finite.max_abs, 1.0);
  EXPECT_EQ(finite.sum, static_cast<double>(whole.size()));  // owned planes only, every rank's
}

TEST(DistributedRun, MoreRanksThanPlanesIsADeckError) {
  Communicator& comm = world();
  if (comm.size() == 1) GTEST_SKIP() << "needs several ranks";
  const io::Deck deck = io::Deck::load(std::string(ADI3D_SOURCE_DIR) + "/inputs/heat_sine.ini",
                                       {"grid.n=5 5 " + std::to_string(2 * comm.size() - 1)});
  const io::RunConfig config = io::read_run_config(deck);
  try {
    app::setup_problem<double>(deck, config, &comm);
    FAIL() << "no error for " << comm.size() << " ranks on " << 2 * comm.size() - 1 << " planes";
  } catch (const io::DeckError& e) {
    EXPECT_NE(std::string(e.what()).find("grid.n"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at most"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace adi3d
