// Parallel output (issue 38 item 3): on every rank of this mpirun, a run's snapshot
// pipeline writes its planes into the one snapshots.h5 and checkpoint.h5 (parallel HDF5)
// and a VTK piece per rank under a .pvti; each file read back whole holds exactly the
// run's final field (gathered in memory), on the CPU or on one GPU per rank
// (ADI3D_MPI_BACKEND=cuda: the staged downloads of each rank's planes).
#include "final_field.hpp"
#include "mpi_world.hpp"
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "app/snapshot_pipeline.hpp"
#include "io/checkpoint.hpp"
#include "io/deck.hpp"
#include "io/hdf5_handles.hpp"
#include "io/run_config.hpp"
#include "solvers/distributed/distributed_backend.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLPImageDataReader.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace adi3d {
namespace {

namespace fs = std::filesystem;
using test::world;

// The final field gathered at rank 0, beside the pipeline that writes the files.
class FinalAndFiles final : public app::RunObserver<double> {
 public:
  FinalAndFiles(app::SnapshotPipeline<double>& files, const SlabDecomposition& slab, Communicator& comm)
      : files_(files), final_(slab, &comm) {}
  void on_start(long step, double t, Backend<double>& b, const double* u) override { files_.on_start(step, t, b, u); }
  void on_step(long step, double t, Backend<double>& b, const double* u) override { files_.on_step(step, t, b, u); }
  bool writes_at(long step, double t) const override { return files_.writes_at(step, t); }
  void on_end(long step, double t, Backend<double>& backend, const double* u) override {
    final_.on_end(step, t, backend, u);
    files_.on_end(step, t, backend, u);
  }
  const std::vector<double>& field() const { return final_.field; }

 private:
  app::SnapshotPipeline<double>& files_;
  FinalField<double> final_;
};

// One directory for every rank: rank 0's name.
std::string shared_directory(Communicator& comm) {
  std::string dir = (fs::temp_directory_path() / ("adi3d_mpi_output_" + std::to_string(::getpid()))).string();
  std::uint64_t length = dir.size();
  comm.broadcast(&length, sizeof length, 0);
  dir.resize(length);
  comm.broadcast(dir.data(), length, 0);
  if (comm.rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  comm.barrier();
  return dir;
}

TEST(DistributedOutput, EveryFileHoldsTheRunsFieldExactly) {
  Communicator& comm = world();
  const std::string dir = shared_directory(comm);
  const io::Deck deck = io::Deck::load(
      std::string(ADI3D_SOURCE_DIR) + "/inputs/heat_output.ini",
      {"grid.n=13 12 17", "time.t_end=0.05", "output.dir=" + dir, "output.formats=hdf5 vtk",
       "output.checkpoint_every=5", "output.fields=u"});
  const io::RunConfig config = io::read_run_config(deck);
  app::ProblemSetup<double> problem = app::setup_problem<double>(deck, config, &comm);
  const char* kind = std::getenv("ADI3D_MPI_BACKEND");
  std::unique_ptr<Backend<double>> backend = kind && std::string(kind) == "cuda"
                                                 ? make_cuda_backend<double>(comm.rank())
                                                 : make_cpu_backend<double>();
  if (problem.distributed())
    backend = std::make_unique<DistributedBackend<double>>(std::move(backend), problem.diffusion.slab, comm);
  const auto files = app::SnapshotPipeline<double>::for_run(config, problem);
  FinalAndFiles observer(*files, problem.diffusion.slab, comm);
  const app::RunResult result = app::run_heat(config, problem, *backend, false, &observer);
  ASSERT_EQ(result.steps, 10);
  comm.barrier();  // every rank's writes are in
  if (comm.rank() == 0) {
    const Grid3& g = config.grid;
    const std::string h5 = dir + "/snapshots.h5";
    std::vector<double> stored;
    {
      io::h5::Hdf5Lock lock;
      io::h5::Handle file = io::h5::open_file(h5, false);
      io::h5::Handle group = io::h5::open_group(file, "snapshots/000010", h5);
      io::h5::read_field(group, "u", g, false, nullptr, &stored, h5);
    }
    EXPECT_EQ(stored, observer.field()) << "snapshots.h5, step 10, on " << comm.size() << " ranks";

    const io::CheckpointState checkpoint = io::read_checkpoint(dir + "/checkpoint.h5");
    EXPECT_EQ(checkpoint.step, 10);
    EXPECT_EQ(checkpoint.u.f64, observer.field()) << "checkpoint.h5 on " << comm.size() << " ranks";

    const std::string image = dir + "/vtk/snapshot_000010." + (comm.size() > 1 ? "pvti" : "vti");
    ASSERT_TRUE(fs::exists(image)) << image;
    if (comm.size() > 1) {
      vtkNew<vtkXMLPImageDataReader> reader;
      reader->SetFileName(image.c_str());
      reader->Update();
      vtkImageData* read = reader->GetOutput();
      int dims[3];
      read->GetDimensions(dims);
      EXPECT_EQ(std::vector<int>(dims, dims + 3), std::vector<int>(g.n.begin(), g.n.end()));
      vtkDataArray* u = read->GetPointData()->GetArray("u");
      ASSERT_NE(u, nullptr) << image;
      ASSERT_EQ(static_cast<std::size_t>(u->GetNumberOfTuples()), observer.field().size());
      std::vector<double> pieces(observer.field().size());
      for (vtkIdType p = 0; p < u->GetNumberOfTuples(); ++p) pieces[static_cast<std::size_t>(p)] = u->GetTuple1(p);
      EXPECT_EQ(pieces, observer.field()) << image << ": the pieces joined";
    }
  }
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

}  // namespace
}  // namespace adi3d
