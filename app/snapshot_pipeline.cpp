#include "app/snapshot_pipeline.hpp"

#include "app/commands.hpp"
#include "io/checkpoint.hpp"
#include "io/hdf5_snapshots.hpp"
#include "io/vtk_snapshots.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <type_traits>

namespace adi3d::app {
namespace {

// A field in the output precision: float32 when asked (output.precision = float) or when
// the run is in float, float64 otherwise.
template <class T>
io::FieldBuffer to_field(const std::string& name, const T* values, std::size_t n, bool single) {
  io::FieldBuffer f;
  f.name = name;
  f.single = single || std::is_same_v<T, float>;
  if (f.single)
    f.f32.assign(values, values + n);
  else
    f.f64.assign(values, values + n);
  return f;
}

bool has(const std::vector<std::string>& v, const char* name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

// Staging buffers: two snapshots' fields (one written while the next is staged); a
// checkpoint takes one of them.
template <class T>
std::size_t staging_capacity(const io::RunConfig& config, const ProblemSetup<T>& problem) {
  const std::vector<std::string>& fields = config.output.fields;
  const std::size_t per_snapshot = (fields.empty() || has(fields, "u") ? 1 : 0) +
                                   (has(fields, "error") && problem.exact ? 1 : 0);
  return 2 * std::max<std::size_t>(per_snapshot, 1);
}

std::string gigabytes(std::size_t bytes) { return fmt::format("{:.2f} GB", static_cast<double>(bytes) * 1e-9); }

}  // namespace

template <class T>
io::OutputRanks output_ranks(const ProblemSetup<T>& problem) {
  io::OutputRanks ranks;
  const SlabDecomposition& slab = problem.diffusion.slab;
  if (!slab.distributed()) return ranks;
  ranks.comm = problem.comm->duplicate();
  ranks.starts.resize(static_cast<std::size_t>(slab.ranks) + 1);
  ranks.comm->allgather(&slab.k_begin, ranks.starts.data(), sizeof(int));
  ranks.starts.back() = slab.whole.n[2];
  return ranks;
}

template <class T>
std::unique_ptr<SnapshotPipeline<T>> SnapshotPipeline<T>::for_run(const io::RunConfig& config,
                                                                  const ProblemSetup<T>& problem,
                                                                  std::optional<long> resume_step) {
  io::SeriesInfo info;
  info.grid = config.grid;
  info.dir = config.output.dir;
  info.deck_text = config.deck_text;
  info.version = "adi3d " + version_string();
  info.problem = io::to_string(config.problem);
  info.compression = config.output.compression;
  info.ranks = output_ranks(problem);
  std::vector<std::unique_ptr<io::SnapshotWriter>> writers;
  if (config.output.hdf5) writers.push_back(std::make_unique<io::Hdf5SeriesWriter>(info, resume_step));
  if (config.output.vtk) writers.push_back(io::make_vtk_series_writer(info, resume_step));
  return std::make_unique<SnapshotPipeline>(config, problem, std::move(writers), resume_step.has_value(), 2,
                                            info.ranks);
}

template <class T>
SnapshotPipeline<T>::SnapshotPipeline(const io::RunConfig& config, const ProblemSetup<T>& problem,
                                      std::vector<std::unique_ptr<io::SnapshotWriter>> writers, bool resumed,
                                      std::size_t queue_depth, io::OutputRanks ranks)
    : config_(config), grid_(config.grid), slab_(problem.diffusion.slab), ranks_(std::move(ranks)),
      resumed_(resumed), pool_(ranks_.values(config.grid), staging_capacity(config, problem)),
      queue_(queue_depth, !ranks_.comm || ranks_.comm->threads_may_overlap()) {
  for (auto& w : writers) writers_.push_back(std::move(w));
  if (slab_.distributed()) {
    comm_ = problem.comm;
    if (!ranks_.shared()) throw std::logic_error("a distributed run's pipeline needs its ranks (output_ranks)");
  }
  wanted_ = !writers_.empty();
  const std::vector<std::string>& fields = config.output.fields;
  want_u_ = fields.empty() || has(fields, "u");
  if (has(fields, "error")) exact_ = problem.exact.get();
  if (has(fields, "alpha") && !problem.diffusion.alpha_field.empty())
    keep_alpha(problem.diffusion.alpha_field.data() + slab_.owned_offset());
  // A field sampled on the backend comes down with the first snapshot (the backend's).
  if (has(fields, "alpha")) backend_alpha_ = problem.diffusion.backend_alpha;
}

template <class T>
void SnapshotPipeline<T>::keep_alpha(const T* local_owned) {
  alpha_ = std::make_shared<io::FieldBuffer>(
      to_field("alpha", local_owned, ranks_.values(grid_), config_.output.single));
}

template <class T>
SnapshotPipeline<T>::~SnapshotPipeline() = default;

template <class T>
typename SnapshotPipeline<T>::Staged SnapshotPipeline<T>::stage(Backend<T>& backend, const T* u) {
  // This rank's owned planes: the whole grid on one rank.
  const std::size_t n = ranks_.values(grid_);
  std::shared_ptr<T> buffer = pool_.acquire(backend, [this] { warn_writer_behind(); });
  std::shared_ptr<PendingDownload> copy = backend.start_download(u + slab_.owned_offset(), buffer.get(), n);
  return {std::move(buffer), std::move(copy)};
}

template <class T>
io::FieldBuffer SnapshotPipeline<T>::staged_field(const std::string& name, const Staged& staged, bool single) const {
  staged.copy->wait();
  io::FieldBuffer f;
  f.name = name;
  f.single = single || std::is_same_v<T, float>;
  f.staged = {staged.values, staged.values.get(), ranks_.values(grid_), std::is_same_v<T, float>};
  return f;
}

template <class T>
void SnapshotPipeline<T>::warn_writer_behind() {
  if (warned_) return;
  warned_ = true;
  spdlog::warn("output: the writer is behind (the disk is slower than the steps between snapshots); stepping "
               "waits for it at step {} (host staging bounded to {} buffers, {})",
               step_, pool_.capacity(), gigabytes(pool_.bytes_bound()));
}

template <class T>
double SnapshotPipeline<T>::writer_wait_seconds() {
  return pool_.waited_seconds() + queue_.waited_seconds();
}

template <class T>
void SnapshotPipeline<T>::snapshot(long step, double t, Backend<T>& backend, const T* u) {
  queue_.check();
  last_snapshot_step_ = step;
  step_ = step;
  if (!wanted_) return;
  if (backend_alpha_) {  // once
    std::vector<T> owned(ranks_.values(grid_));
    backend.download(backend_alpha_ + slab_.owned_offset(), owned.data(), owned.size());
    keep_alpha(owned.data());
    backend_alpha_ = nullptr;
  }
  // The error against check.exact, formed and reduced where the backend is (collective);
  // a non-finite exact solution is a deck error here, on every rank.
  std::optional<physics::ErrorNorms> norms;
  Staged error;
  if (exact_) {
    // Kept: the next snapshot's error is formed on the backend's stream after this
    // snapshot's download of it.
    if (error_.empty()) error_ = backend.allocate(slab_.local.size());
    norms = error_against(*exact_, t, backend, u, comm_, error_.data());
    error = stage(backend, error_.data());
  }
  const Staged host = want_u_ ? stage(backend, u) : Staged{};
  ++snapshots_;
  // Everything below runs on the writer thread: it waits for the downloads and writes
  // the staged buffers as they are.
  queue_.push([this, host, error, norms, step, t] {
    io::Snapshot s;
    s.step = step;
    s.time = t;
    const bool single = config_.output.single;
    if (host.values) s.fields.push_back(staged_field("u", host, single));
    if (norms) {
      s.has_error_norms = true;
      s.error_l2 = norms->l2;
      s.error_max = norms->max;
    }
    if (error.values) s.fields.push_back(staged_field("error", error, single));
    if (alpha_) s.fields.push_back(*alpha_);
    for (const auto& w : writers_) w->write(s);
  }, [this] { warn_writer_behind(); });
}

template <class T>
void SnapshotPipeline<T>::checkpoint(long step, double t, Backend<T>& backend, const T* u) {
  queue_.check();
  step_ = step;
  const Staged host = stage(backend, u);
  ++checkpoints_;
  queue_.push([this, host, step, t] {
    io::CheckpointState state;
    state.grid = grid_;
    state.precision = std::is_same_v<T, float> ? io::Precision::f32 : io::Precision::f64;
    state.step = step;
    state.time = t;
    state.deck_text = config_.deck_text;
    state.version = "adi3d " + version_string();
    state.u = staged_field("u", host, false);  // the run's precision, always
    io::write_checkpoint((std::filesystem::path(config_.output.dir) / "checkpoint.h5").string(), state, ranks_);
  }, [this] { warn_writer_behind(); });
}

template <class T>
void SnapshotPipeline<T>::finish() {
  queue_.drain();
}

template <class T>
bool SnapshotPipeline<T>::finish_within(double seconds) {
  return queue_.drain_for(std::chrono::duration<double>(seconds));
}

template <class T>
void SnapshotPipeline<T>::on_start(long step, double t, Backend<T>& backend, const T* u) {
  const double interval = config_.output.interval;
  if (interval > 0) next_time_ = (std::floor(t / interval * (1 + 1e-12)) + 1) * interval;
  // The initial state opens a series with a cadence; a restart continues one instead.
  if (!resumed_ && (config_.output.every > 0 || interval > 0)) snapshot(step, t, backend, u);
}

template <class T>
bool SnapshotPipeline<T>::snapshot_due(long step, double t) const {
  const io::OutputConfig& o = config_.output;
  return (o.every > 0 && step % o.every == 0) || (o.interval > 0 && t >= next_time_ * (1 - 1e-12));
}

template <class T>
bool SnapshotPipeline<T>::checkpoint_due(long step) const {
  return config_.output.checkpoint_every > 0 && step % config_.output.checkpoint_every == 0;
}

template <class T>
bool SnapshotPipeline<T>::writes_at(long step, double t) const {
  return snapshot_due(step, t) || checkpoint_due(step);
}

template <class T>
void SnapshotPipeline<T>::on_step(long step, double t, Backend<T>& backend, const T* u) {
  const io::OutputConfig& o = config_.output;
  const bool due = snapshot_due(step, t);
  if (o.interval > 0)
    while (next_time_ <= t * (1 + 1e-12)) next_time_ += o.interval;
  if (due) snapshot(step, t, backend, u);
  if (checkpoint_due(step)) checkpoint(step, t, backend, u);
}

template <class T>
void SnapshotPipeline<T>::on_end(long step, double t, Backend<T>& backend, const T* u) {
  if (last_snapshot_step_ != step) snapshot(step, t, backend, u);
  finish();
}

template <class T>
void SnapshotPipeline<T>::on_stop(long step, double t, Backend<T>& backend, const T* u) {
  checkpoint(step, t, backend, u);
  finish();
}

template <class T>
std::vector<std::string> SnapshotPipeline<T>::outputs() const {
  std::vector<std::string> out;
  for (const auto& w : writers_) out.push_back(w->description());
  if (checkpoints_ > 0)
    out.push_back((std::filesystem::path(config_.output.dir) / "checkpoint.h5").string());
  return out;
}

template class SnapshotPipeline<float>;
template class SnapshotPipeline<double>;
template io::OutputRanks output_ranks(const ProblemSetup<float>&);
template io::OutputRanks output_ranks(const ProblemSetup<double>&);

}  // namespace adi3d::app
