#pragma once
// The snapshot pipeline of a run: decides when to write (output.every or
// output.interval, the final state, output.checkpoint_every), copies the field from the
// backend into a host buffer, and hands the writing (HDF5 + XDMF, VTK, checkpoints) to a
// background writer thread (io/snapshot_queue.hpp), so that stepping goes on while the
// files are written. Write errors come back to the main thread at the next snapshot or
// at the end (finish()).
//
// A heat run passes it to run_heat as its RunObserver. A steady (Poisson) solve calls
// snapshot() once with its result and then finish().
//
// With check.exact, each snapshot carries the error norms, and the error field where asked:
// u - exact formed and reduced where the backend is (on the GPU for a CUDA backend), so
// that only what is written comes to the host.
//
// Distributed runs: every rank makes the pipeline and takes part in each snapshot and
// checkpoint; the ranks' owned planes are gathered on rank 0, which alone writes (the
// files are those of a one-rank run). Rank 0 then holds the whole field in host memory
// while it writes.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "io/snapshot.hpp"
#include "io/snapshot_queue.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::app {

template <class T>
class SnapshotPipeline final : public RunObserver<T> {
 public:
  // The pipeline a deck asks for: writers for output.formats in output.dir. On a restart
  // (`resume_step`) the series continue after that step and no initial snapshot is taken.
  static std::unique_ptr<SnapshotPipeline> for_run(const io::RunConfig& config, const ProblemSetup<T>& problem,
                                                   std::optional<long> resume_step = std::nullopt);

  // Explicit writers (tests inject their own); `queue_depth` bounds the jobs in flight.
  SnapshotPipeline(const io::RunConfig& config, const ProblemSetup<T>& problem,
                   std::vector<std::unique_ptr<io::SnapshotWriter>> writers, bool resumed = false,
                   std::size_t queue_depth = 2);
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

  long snapshots_queued() const { return snapshots_; }
  long checkpoints_queued() const { return checkpoints_; }
  // What was written where, for the run summary.
  std::vector<std::string> outputs() const;

 private:
  bool snapshot_due(long step, double t) const;
  bool checkpoint_due(long step) const;
  // The whole field in host memory: null on the ranks other than 0 of a distributed run.
  std::shared_ptr<std::vector<T>> download(Backend<T>& backend, const T* u);
  // The whole field from each rank's slab (owned planes), on rank 0.
  std::vector<T> gather(const T* local_owned) const;

  const io::RunConfig& config_;
  Grid3 grid_;
  SlabDecomposition slab_;
  Communicator* comm_ = nullptr;   // set in distributed runs
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
  io::WriterQueue queue_;  // last: its thread stops before the members it uses go
};

}  // namespace adi3d::app
