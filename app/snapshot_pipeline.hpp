#pragma once
// The snapshot pipeline of a run: decides when to write (output.every or
// output.interval, the final state, output.checkpoint_every), starts the download of the
// fields from the backend into host staging buffers, and hands the writing (HDF5 + XDMF,
// VTK, checkpoints) to a background writer thread (io/snapshot_queue.hpp), so that
// stepping goes on while the files are written. Write errors come back to the main thread
// at the next snapshot or at the end (finish()).
//
// Host memory (issue 38, output that keeps up): each field goes from the backend into a
// staging buffer of a bounded pool (staging_pool.hpp; pinned on CUDA, where the copy runs
// on the backend's stream and the host does not wait for it), and the writers consume that
// buffer in place: no other copy of a field is made (HDF5 converts a double field stored
// as float32 in strips while it writes). The pool holds at most 2 x (fields per snapshot)
// buffers of one field each (u and error: 4; at 1024^3 in float 4 x 4.3 GB), so one
// snapshot is written while the next is staged. When the writer falls behind, the next
// snapshot waits for a buffer: stepping waits, with one warning the first time.
//
// A heat run passes it to run_heat as its RunObserver. A steady (Poisson) solve calls
// snapshot() once with its result and then finish().
//
// With check.exact, each snapshot carries the error norms, and the error field where asked:
// u - exact formed and reduced where the backend is (on the GPU for a CUDA backend), so
// that only what is written comes to the host.
//
// Distributed runs (issue 38, parallel output): every rank makes the pipeline, stages its
// owned planes in a pool of its own (the bound above, of its planes) and writes them
// itself: into the one snapshots.h5 and checkpoint.h5 through parallel HDF5, and as its
// piece of each VTK image under a .pvti; rank 0 keeps the indexes (XDMF, PVD). The files
// are those of a one-rank run, but for the VTK pieces. The writers talk over a
// communicator of their own, on each rank's writer thread where MPI allows threads to call
// it at once (MPI_THREAD_MULTIPLE), else on the main thread as each snapshot is taken.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "app/staging_pool.hpp"
#include "io/snapshot.hpp"
#include "io/snapshot_queue.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::app {

// The ranks that write a run's files and the planes each holds: in a distributed run, a
// communicator of their own over the run's ranks (collective: every rank calls it).
template <class T>
io::OutputRanks output_ranks(const ProblemSetup<T>& problem);

template <class T>
class SnapshotPipeline final : public RunObserver<T> {
 public:
  // The pipeline a deck asks for: writers for output.formats in output.dir. On a restart
  // (`resume_step`) the series continue after that step and no initial snapshot is taken.
  static std::unique_ptr<SnapshotPipeline> for_run(const io::RunConfig& config, const ProblemSetup<T>& problem,
                                                   std::optional<long> resume_step = std::nullopt);

  // Explicit writers (tests inject their own); `queue_depth` bounds the jobs in flight (the
  // staging pool bounds the memory they hold).
  // `ranks`: the writers' (output_ranks(); one rank when not given).
  SnapshotPipeline(const io::RunConfig& config, const ProblemSetup<T>& problem,
                   std::vector<std::unique_ptr<io::SnapshotWriter>> writers, bool resumed = false,
                   std::size_t queue_depth = 2, io::OutputRanks ranks = {});
  ~SnapshotPipeline() override;

  void on_start(long step, double t, Backend<T>& backend, const T* u) override;
  void on_step(long step, double t, Backend<T>& backend, const T* u) override;
  // The final snapshot (unless the last step just wrote one), then finish().
  void on_end(long step, double t, Backend<T>& backend, const T* u) override;
  // A run stopped by a signal: a checkpoint at this step (whatever
  // output.checkpoint_every says), then finish(). No snapshot, so that the restarted run's
  // series is the uninterrupted run's.
  void on_stop(long step, double t, Backend<T>& backend, const T* u) override;
  bool writes_at(long step, double t) const override;

  // Queues one snapshot of u (backend memory) now; rethrows an earlier write failure.
  void snapshot(long step, double t, Backend<T>& backend, const T* u);
  // Queues a checkpoint of u to OUTPUT_DIR/checkpoint.h5.
  void checkpoint(long step, double t, Backend<T>& backend, const T* u);
  // Waits for every queued write; rethrows the first failure.
  void finish();
  // finish() for at most `seconds`: false when writes were still in flight then.
  bool finish_within(double seconds);

  long snapshots_queued() const { return snapshots_; }
  // Seconds stepping waited for the writer (for a staging buffer or a queue slot), in all.
  double writer_wait_seconds();
  // The staging buffers: how many exist, the most in use at once, and the bound on both.
  const StagingPool<T>& staging() const { return pool_; }
  long checkpoints_queued() const { return checkpoints_; }
  // What was written where, for the run summary.
  std::vector<std::string> outputs() const;

 private:
  bool snapshot_due(long step, double t) const;
  bool checkpoint_due(long step) const;
  // One field on its way to the writer: a pool buffer and the download that fills it.
  struct Staged {
    std::shared_ptr<T> values;
    std::shared_ptr<PendingDownload> copy;
  };
  Staged stage(Backend<T>& backend, const T* u);
  // The field a writer reads: the staged buffer itself, once its download is done (on the
  // writer thread).
  io::FieldBuffer staged_field(const std::string& name, const Staged& staged, bool single) const;
  // The alpha field written with every snapshot, from this rank's owned planes.
  void keep_alpha(const T* local_owned);
  // The one warning, the first time stepping waits for the writer.
  void warn_writer_behind();

  const io::RunConfig& config_;
  Grid3 grid_;
  SlabDecomposition slab_;
  Communicator* comm_ = nullptr;   // set in distributed runs
  io::OutputRanks ranks_;          // the writers' ranks and planes
  bool wanted_ = false;            // snapshots are taken (the same on every rank)
  std::vector<std::shared_ptr<io::SnapshotWriter>> writers_;
  std::shared_ptr<const io::FieldBuffer> alpha_;   // output precision, when written
  const T* backend_alpha_ = nullptr;               // an alpha field still to download for alpha_
  const physics::GridFormula<T>* exact_ = nullptr; // check.exact where the error is written
  bool resumed_;
  bool want_u_ = false;
  double next_time_ = 0;  // the next output.interval snapshot's time
  long last_snapshot_step_ = -1;
  long snapshots_ = 0, checkpoints_ = 0;
  long step_ = 0;                // the step being written (for the warning)
  bool warned_ = false;
  Array<T> error_;               // backend memory for u - exact, kept between snapshots
  StagingPool<T> pool_;          // before queue_: jobs give their buffers back to it
  io::WriterQueue queue_;  // last: its thread stops before the members it uses go
};

}  // namespace adi3d::app
