#include "solvers/poisson_mixed.hpp"

#include "solvers/face_layout.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace adi3d {
namespace {

// A refinement never gains less than this factor while float has anything to give: a
// worse one means the double residual sits on its own rounding floor.
constexpr double kLeastGain = 0.5;

// The correction's data: the source s r in float from the double residual r (on the
// double backend), zero on every face. s scales r into [-1, 1], so that float's range never
// bites whatever the units.
// Robin faces keep their h (u_inf is 0: the correction's faces are homogeneous).
class CorrectionData final : public Forcing<float> {
 public:
  CorrectionData(Backend<double>& outer, const Grid3& grid, const double* r, const Forcing<double>& data)
      : outer_(outer), grid_(grid), r_(r), data_(data) {}
  void set_scale(double scale) { scale_ = scale; }
  bool has_source() const override { return true; }
  // Fixed within a float solve; a refinement reloads it (DouglasStepper::forcing_changed).
  bool source_depends_on_time() const override { return false; }
  void source(double, float* out) const override {
    std::vector<double> host(grid_.size());
    outer_.download(r_, host.data(), host.size());
    for (std::size_t p = 0; p < host.size(); ++p) out[p] = static_cast<float>(scale_ * host[p]);
  }
  bool source_on_backend(double, float* values, Backend<float>& backend) const override {
    backend.axpby_converted(scale_, r_, 0.0, values, grid_.size());
    return true;
  }
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int) const override { return true; }
  void boundary(int face, double, float* out) const override { std::fill(out, out + face_size(grid_, face), 0.0f); }
  std::optional<double> robin_h_constant(int face) const override { return data_.robin_h_constant(face); }
  std::array<double, 2> robin_h_range(int face) const override { return data_.robin_h_range(face); }
  void robin_h(int face, double t, float* out) const override {
    std::vector<double> h(face_size(grid_, face));
    data_.robin_h(face, t, h.data());
    std::copy(h.begin(), h.end(), out);
  }

 private:
  Backend<double>& outer_;
  Grid3 grid_;
  const double* r_;
  const Forcing<double>& data_;
  double scale_ = 1;
};

// A diffusivity sampled in backend memory (backend_alpha) is converted there, into `alpha`.
Diffusion<float> in_float(const Diffusion<double>& d, Backend<float>& inner, Array<float>& alpha) {
  Diffusion<float> f;
  f.grid = d.grid;
  f.bc = d.bc;
  f.alpha = d.alpha;
  f.alpha_field.assign(d.alpha_field.begin(), d.alpha_field.end());
  if (d.backend_alpha) {
    const std::size_t n = d.grid.size();
    alpha = inner.allocate(n);
    inner.axpby_converted(1.0, d.backend_alpha, 0.0, alpha.data(), n);
    f.backend_alpha = alpha.data();
  }
  f.slab = d.slab;
  f.whole_alpha_range = d.whole_alpha_range;
  return f;
}

}  // namespace

PoissonMixed::PoissonMixed(Backend<double>& outer, Backend<float>& inner, const Diffusion<double>& diffusion,
                           const Forcing<double>& forcing, PoissonOptions options, double inner_tol)
    : outer_(outer), inner_(inner), diffusion_(diffusion), forcing_(forcing), options_(options),
      inner_tol_(inner_tol) {}

PoissonReport PoissonMixed::solve(double* u, const std::function<void(long, long, double)>& progress,
                                  const std::function<bool()>& stop) {
  const std::size_t n = diffusion_.grid.size();
  PoissonReport report;
  PoissonAdi<double> outer(outer_, diffusion_, forcing_, options_);
  outer.make_compatible(report);
  // Memory, in grid arrays. Double: u, the source (where there is one) and the residual
  // stepper's scratch, which holds r: 24 B a point, what a double solve iterates with.
  // Float: e, the float stepper's source (s r, converted in place: no float copy of r) and
  // right-hand side, 12 B a point, and the float backend's line-solve scratch. An alpha
  // field adds its values in both precisions (12 B a point; on GPUs that read a material
  // index, 1 B more).
  const std::unique_ptr<DouglasStepper<double>> residual = outer.make_stepper();
  residual->initialize(u, 0.0);
  double* r = residual->scratch();
  {
    Array<float> alpha;
    const Diffusion<float> inner_diffusion = in_float(diffusion_, inner_, alpha);
    CorrectionData data(outer_, diffusion_.grid, r, forcing_);
    PoissonAdi<float> inner(inner_, inner_diffusion, data, {inner_tol_, options_.max_iter, options_.cycle});
    const std::unique_ptr<DouglasStepper<float>> sweeps = inner.make_stepper();
    Array<float> e = inner_.allocate(n);
    double previous = INFINITY, inner_tol = inner_tol_, deepest = kMixedDeepest;
    for (;;) {
      residual->residual(u, 0.0, r);
      const Norms norms = outer_.difference_norms(r, nullptr, n);
      const double norm = std::sqrt(norms.sum_squares);
      if (!std::isfinite(norms.max_abs) || !std::isfinite(norm)) {
        report.non_finite = true;
        return report;
      }
      if (report.refinement_history.empty()) report.initial_residual = norm > 0 ? norm : 1.0;
      const double relative = norm / report.initial_residual;
      report.refinement_history.push_back(relative);
      if (relative <= options_.tol || report.stopped || report.iterations >= options_.max_iter) break;
      if (relative > kLeastGain * previous) {
        report.stagnated = true;
        break;
      }
      previous = relative;

      // The correction, from e = 0 with zero boundary values. The backends' queues are
      // their own (CUDA streams): r is complete once its norms are back; e is complete
      // after the float backend's synchronize.
      const double scale = 1.0 / norms.max_abs;
      data.set_scale(scale);
      sweeps->forcing_changed();
      inner_.fill(e.data(), 0.0f, n);
      sweeps->initialize(e.data(), 0.0);
      // The last refinement aims at tol itself where a float solve gets that far: the
      // sweeps then end where the double iteration's would, not a refinement later.
      const double needed = options_.tol / relative;
      inner.set_tol(needed >= std::min(deepest, inner_tol) ? needed : inner_tol);
      inner.set_max_iter(options_.max_iter - report.iterations);
      PoissonReport correction;
      const long done = report.iterations, refinement = report.refinements + 1;
      inner.iterate(
          *sweeps, e.data(), correction,
          [&](long k, double reduction) {
            report.history.push_back(relative * reduction);
            if (progress) progress(done + k, refinement, relative * reduction);
          },
          stop, done);
      report.iterations += correction.iterations;
      report.taus = correction.taus;
      report.lambda_min = correction.lambda_min;
      report.lambda_max = correction.lambda_max;
      if (correction.non_finite) {
        report.non_finite = true;
        return report;
      }
      inner_.synchronize();
      outer_.axpby_converted(1.0 / scale, e.data(), 1.0, u, n);
      outer_.synchronize();  // before the next correction overwrites e
      report.refinements = refinement;
      report.stopped = correction.stopped;
      // Float's floor above the targets: aim above it from now on.
      if (correction.stagnated && !correction.history.empty()) {
        const double floor = 2 * *std::min_element(correction.history.begin(), correction.history.end());
        inner_tol = std::max(inner_tol, floor);
        deepest = std::max(deepest, floor);
      }
    }
  }
  outer.finish(*residual, u, report);
  return report;
}

}  // namespace adi3d
