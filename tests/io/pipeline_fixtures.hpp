#pragma once
// In-process runs for the snapshot pipeline's tests: a deck's run set up on the CPU
// backend, and an observer that keeps its own synchronous copy of u at every step (what
// the snapshots must hold) before handing the step on to the pipeline.
#include "app/heat_run.hpp"
#include "app/problem_setup.hpp"
#include "io/deck.hpp"
#include "io/run_config.hpp"
#include "io/snapshot.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace adi3d::test {

// A writer that is slow and records what it got, so that the queue fills up and stepping
// runs ahead of the writes.
class SlowRecorder final : public io::SnapshotWriter {
 public:
  explicit SlowRecorder(int fail_at = -1, std::chrono::milliseconds delay = std::chrono::milliseconds(15))
      : fail_at_(fail_at), delay_(delay) {}
  void write(const io::Snapshot& s) override {
    std::this_thread::sleep_for(delay_);
    if (writes_++ == fail_at_) throw io::OutputError("recorder.h5: injected write failure");
    const io::FieldBuffer& u = s.fields.at(0);  // the staging buffer itself: copy it
    std::vector<double>& v = got[s.step];
    for (std::size_t i = 0; i < u.size(); ++i) v.push_back(u.at(i));
  }
  std::string description() const override { return "recorder"; }
  std::map<long, std::vector<double>> got;

 private:
  int fail_at_;
  std::chrono::milliseconds delay_;
  int writes_ = 0;
};

// Forwards to the pipeline and keeps its own synchronous copy of u at every step.
class Capture final : public app::RunObserver<double> {
 public:
  Capture(app::RunObserver<double>& next, std::size_t size) : next_(next), size_(size) {}
  void on_start(long step, double t, Backend<double>& b, const double* u) override {
    keep(step, b, u);
    next_.on_start(step, t, b, u);
  }
  void on_step(long step, double t, Backend<double>& b, const double* u) override {
    keep(step, b, u);
    next_.on_step(step, t, b, u);
  }
  void on_end(long step, double t, Backend<double>& b, const double* u) override { next_.on_end(step, t, b, u); }
  std::map<long, std::vector<double>> fields;

 private:
  void keep(long step, Backend<double>& b, const double* u) {
    std::vector<double>& f = fields[step];
    f.resize(size_);
    b.download(u, f.data(), f.size());
  }
  app::RunObserver<double>& next_;
  std::size_t size_;
};

struct InProcess {
  io::Deck deck;
  io::RunConfig config;
  app::ProblemSetup<double> problem;
  std::unique_ptr<Backend<double>> backend = make_cpu_backend<double>();
  explicit InProcess(const std::string& path, const std::vector<std::string>& sets = {})
      : deck(io::Deck::load(path, sets)), config(io::read_run_config(deck)),
        problem(app::setup_problem<double>(deck, config)) {}
};

}  // namespace adi3d::test
