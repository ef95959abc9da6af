#include "solvers/poisson_krylov.hpp"

#include "solvers/env_switch.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/poisson_spectral.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace adi3d {

template <class T>
class PoissonKrylov<T>::Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  // z ~ (-A)^-1 g under zero face data; g may be overwritten.
  virtual void apply(T* g, T* z) = 0;
  // The ADI cycle's parameters (none for the direct solve).
  virtual std::vector<double> taus() const { return {}; }
};

namespace {

// Each z plane's mean alpha (empty where alpha is constant): the direct solve's problem.
// A field in backend memory is summed there, one reduction for all planes, rather than
// read back whole (136 MB at 257^3 double) and summed on one host thread.
template <class T>
SpectralLayers<T> plane_means(const Diffusion<T>& d, Backend<T>& backend) {
  const Grid3& g = d.grid;
  const std::size_t plane = static_cast<std::size_t>(g.n[0]) * g.n[1];
  SpectralLayers<T> layers;
  if (d.backend_alpha && d.alpha_field.empty()) {
    for (const double sum : backend.plane_sums(d.backend_alpha, plane, static_cast<std::size_t>(g.n[2])))
      layers.alpha.push_back(static_cast<T>(sum / static_cast<double>(plane)));
    return layers;
  }
  std::vector<T> downloaded;
  const T* field = host_alpha_field(d, backend, downloaded);
  if (!field) return layers;
  for (int k = 0; k < g.n[2]; ++k) {
    double sum = 0;
    for (std::size_t e = 0; e < plane; ++e) sum += field[plane * static_cast<std::size_t>(k) + e];
    layers.alpha.push_back(static_cast<T>(sum / static_cast<double>(plane)));
  }
  return layers;
}

// The direct solve of the plane means leaves out alpha's variation inside planes. Scaled by
// D = sqrt(plane mean / alpha) on both sides (z = D L^-1 D g, still symmetric and positive
// definite), it leaves out only what D A D misses of that: for smooth alpha about
// (laplacian sqrt(alpha)) / sqrt(alpha), small beside the operator. Where alpha jumps
// between neighbours, D A D is rougher than A, and the scaling costs iterations: a random
// field (a factor 100 between neighbours) 81 against 65, inputs/chip_vias.ini (1000) at
// 257^3 stagnated at a residual of 4.6 where the plain solve converged in 120. So only
// fields whose neighbours inside planes differ by this factor or less are scaled
// (inputs/poisson_variable.ini: 4 iterations against 17 at 257^3; a layered field needs
// none). Measured in docs/numerics.md.
constexpr double kLargestScaledJump = 4;

bool scaling_pays(double jump) {
  return jump > 1 && jump <= kLargestScaledJump && !env_switched_off("ADI3D_KRYLOV_SCALING");
}

template <class T>
class SpectralPreconditioner final : public PoissonKrylov<T>::Preconditioner {
 public:
  SpectralPreconditioner(Backend<T>& backend, const OperatorView<T>& op, const SpectralLayers<T>& layers,
                         std::size_t points)
      : backend_(backend), points_(points), solve_(backend.make_spectral_solve(op, layers)) {
    if (!solve_) throw BackendUnavailable(backend.description() + " has no direct Poisson solve");
    if (op.alpha_field && !layers.alpha.empty() &&
        scaling_pays(backend.in_plane_jump(op.alpha_field, {op.n[0], op.n[1], op.n[2]}))) {
      scaling_ = backend.allocate(points);
      backend.layer_scaling(op.alpha_field, layers.alpha, static_cast<std::size_t>(op.n[0]) * op.n[1],
                            scaling_.data());
    }
  }
  void apply(T* g, T* z) override {
    if (scaling_.data()) backend_.multiply(scaling_.data(), g, points_);
    backend_.fill(z, T(0), points_);
    solve_->solve(g, z);  // transforms g in place
    if (scaling_.data()) backend_.multiply(scaling_.data(), z, points_);
  }

 private:
  Backend<T>& backend_;
  std::size_t points_;
  std::unique_ptr<SpectralSolve<T>> solve_;
  Array<T> scaling_;  // sqrt(plane mean / alpha), where alpha varies inside planes
};

// The ADI preconditioner's data: a source held in backend memory (set before each cycle),
// zero on every face; Robin faces keep their h (u_inf is 0), which is part of A.
template <class T>
class ArraySource final : public Forcing<T> {
 public:
  ArraySource(const Grid3& grid, const Forcing<T>& data) : grid_(grid), data_(data) {}
  void set(const T* values, Backend<T>& backend) {
    values_ = values;
    backend_ = &backend;
  }
  bool has_source() const override { return true; }
  // Fixed within a cycle; the next cycle reloads it (DouglasStepper::forcing_changed).
  bool source_depends_on_time() const override { return false; }
  void source(double, T* out) const override { backend_->download(values_, out, grid_.size()); }
  bool source_on_backend(double, T* values, Backend<T>& backend) const override {
    backend.copy(values_, values, grid_.size());
    return true;
  }
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int) const override { return true; }
  void boundary(int face, double, T* out) const override { std::fill(out, out + face_size(grid_, face), T(0)); }
  std::optional<double> robin_h_constant(int face) const override { return data_.robin_h_constant(face); }
  std::array<double, 2> robin_h_range(int face) const override { return data_.robin_h_range(face); }
  bool robin_h_depends_on_time(int) const override { return false; }
  void robin_h(int face, double, T* out) const override { data_.robin_h(face, 0.0, out); }
  bool robin_h_on_backend(int face, double, T* values, Backend<T>& backend) const override {
    return data_.robin_h_on_backend(face, 0.0, values, backend);
  }

 private:
  Grid3 grid_;
  const Forcing<T>& data_;
  const T* values_ = nullptr;
  Backend<T>* backend_ = nullptr;
};

// The spectrum's bounds for the ADI cycle of the preconditioner: lambda_max as the
// iteration's, lambda_min that of alpha's mean where alpha is a field. The iteration's
// lambda_min takes alpha's least value, which a thin layer of contrast 1000 makes 1000
// times too small; the largest steps then mix the non-commuting factors so much that the
// cycle diverges (a stack with vias: residual 1e8 after 37 iterations, 17 x 16 x 20). CG
// itself removes the few smooth modes below the mean's bound. Measured with the cases of
// tests/unit/test_poisson_krylov.cpp at 17 x 16 x 20 (conjugate gradients x steps per
// cycle, to 1e-10): the least alpha's bound diverges on the two stacks and takes 7 x 6 and
// 10 x 7 on the smooth and random fields; the mean's takes 55 x 6 and 48 x 7 on the stacks,
// 7 x 5 and 9 x 5 (the ADI iteration: 49 and 112 steps).
template <class T>
SpectrumBounds preconditioning_bounds(const Diffusion<T>& d, const Forcing<T>& data, const T* alpha_field,
                                      Backend<T>& backend) {
  const auto robin_h = robin_h_ranges(d.whole_bc(), data);
  SpectrumBounds bounds = spectrum_bounds(d, robin_h);
  if (!alpha_field) return bounds;
  Diffusion<T> uniform;
  uniform.grid = d.grid;
  uniform.bc = d.bc;
  uniform.slab = d.slab;
  const double mean = backend.difference_norms(alpha_field, nullptr, d.grid.size()).sum /
                      static_cast<double>(d.whole_grid().size());
  uniform.alpha = {mean, mean, mean};
  uniform.whole_alpha_range = {mean, mean};
  bounds.lambda_min = std::min(spectrum_bounds(uniform, robin_h).lambda_min, bounds.lambda_max / 4);
  return bounds;
}

// The problem of d over an alpha field already in backend memory (the Krylov solve's
// stepper's): the preconditioner's stepper then reads it rather than uploading a copy.
template <class T>
Diffusion<T> over_backend_alpha(const Diffusion<T>& d, const T* alpha_field) {
  Diffusion<T> borrowed;
  borrowed.grid = d.grid;
  borrowed.bc = d.bc;
  borrowed.alpha = d.alpha;
  borrowed.backend_alpha = alpha_field;
  borrowed.slab = d.slab;
  borrowed.whole_alpha_range = d.whole_alpha_range;
  if (alpha_field && !d.backend_alpha && !d.slab.distributed()) {  // a host field's range: its own
    const auto [lo, hi] = std::minmax_element(d.alpha_field.begin(), d.alpha_field.end());
    borrowed.whole_alpha_range = {static_cast<double>(*lo), static_cast<double>(*hi)};
  }
  return borrowed;
}

// One cycle of the ADI iteration from z = 0: a fixed linear map of g, as every cycle takes
// the same parameters from the same start.
template <class T>
class AdiPreconditioner final : public PoissonKrylov<T>::Preconditioner {
 public:
  AdiPreconditioner(Backend<T>& backend, const Diffusion<T>& diffusion, const T* alpha_field, const Forcing<T>& data,
                    int cycle)
      : backend_(backend), points_(diffusion.grid.size()), diffusion_(over_backend_alpha(diffusion, alpha_field)),
        source_(diffusion.grid, data), iteration_(backend, diffusion_, source_, {0.0, 1, cycle}),
        stepper_(iteration_.make_stepper()) {
    iteration_.set_bounds(preconditioning_bounds(diffusion, data, alpha_field, backend));
    taus_ = iteration_.parameters();
    iteration_.set_max_iter(static_cast<long>(taus_.size()));
  }
  void apply(T* g, T* z) override {
    source_.set(g, backend_);
    stepper_->forcing_changed();
    backend_.fill(z, T(0), points_);
    stepper_->initialize(z, 0.0);
    PoissonReport cycle;
    iteration_.iterate(*stepper_, z, cycle, {}, {});
  }
  std::vector<double> taus() const override { return taus_; }

 private:
  Backend<T>& backend_;
  std::size_t points_;
  Diffusion<T> diffusion_;
  ArraySource<T> source_;
  PoissonAdi<T> iteration_;
  std::unique_ptr<DouglasStepper<T>> stepper_;
  std::vector<double> taus_;
};

}  // namespace

template <class T>
std::string krylov_obstacle(const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                            KrylovPreconditioner preconditioner) {
  if (preconditioner != KrylovPreconditioner::spectral) return "";
  if (diffusion.slab.distributed())
    return "the direct solve runs on one rank (solver.preconditioner = adi runs on several)";
  const SpectralObstacle faces = spectral_face_obstacle(diffusion, forcing);
  if (!faces.none())
    return "the direct solve does not take these faces: " + faces.why + "; solver.preconditioner = adi takes any faces";
  return "";
}

template <class T>
bool krylov_scales(const Diffusion<T>& diffusion, Backend<T>& backend) {
  const Grid3& g = diffusion.grid;
  if (diffusion.backend_alpha) return scaling_pays(backend.in_plane_jump(diffusion.backend_alpha, g.n));
  if (diffusion.alpha_field.empty()) return false;
  return scaling_pays(make_cpu_backend<T>()->in_plane_jump(diffusion.alpha_field.data(), g.n));
}

template <class T>
KrylovPreconditioner krylov_preconditioner(const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                           KrylovPreconditioner requested) {
  if (requested != KrylovPreconditioner::automatic) return requested;
  return krylov_obstacle(diffusion, forcing, KrylovPreconditioner::spectral).empty() ? KrylovPreconditioner::spectral
                                                                                     : KrylovPreconditioner::adi;
}

template <class T>
PoissonKrylov<T>::PoissonKrylov(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                PoissonOptions options)
    : backend_(backend), diffusion_(diffusion), options_(options), adi_(backend, diffusion, forcing, options),
      singular_(!anchored(diffusion.whole_bc(), forcing)),
      preconditioner_kind_(krylov_preconditioner(diffusion, forcing, options.preconditioner)) {
  const std::string obstacle = krylov_obstacle(diffusion, forcing, preconditioner_kind_);
  if (!obstacle.empty()) throw std::invalid_argument("the Krylov solve's preconditioner does not apply: " + obstacle);
}

template <class T>
PoissonKrylov<T>::~PoissonKrylov() = default;

template <class T>
PoissonReport PoissonKrylov<T>::solve(T* u, const std::function<void(long, double)>& progress,
                                      const std::function<bool()>& stop) {
  const auto start = std::chrono::steady_clock::now();
  PoissonReport report;
  report.method = "krylov";
  adi_.make_compatible(report);
  const std::unique_ptr<DouglasStepper<T>> stepper = adi_.make_stepper();
  stepper->initialize(u, 0.0);
  // The direct solve's plans are kept for the next solve; the ADI cycle reads this
  // stepper's alpha, and lives as long.
  std::unique_ptr<Preconditioner> adi_cycle;
  if (preconditioner_kind_ == KrylovPreconditioner::adi)
    adi_cycle = std::make_unique<AdiPreconditioner<T>>(backend_, diffusion_, stepper->view().alpha_field,
                                                      adi_.forcing(), options_.cycle);
  else if (!preconditioner_)
    preconditioner_ = std::make_unique<SpectralPreconditioner<T>>(backend_, stepper->view(),
                                                                  plane_means(diffusion_, backend_),
                                                                  diffusion_.grid.size());
  Preconditioner& preconditioner = adi_cycle ? *adi_cycle : *preconditioner_;
  report.taus = preconditioner.taus();
  const std::size_t n = diffusion_.grid.size();
  const double points = static_cast<double>(diffusion_.whole_grid().size());
  Array<T> r = backend_.allocate(n), z = backend_.allocate(n), p = backend_.allocate(n), q = backend_.allocate(n),
           data = backend_.allocate(n), scratch = backend_.allocate(n);
  backend_.synchronize();
  const auto solve_start = std::chrono::steady_clock::now();
  report.setup_seconds = std::chrono::duration<double>(solve_start - start).count();
  const auto finish = [&] {
    backend_.synchronize();
    report.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - solve_start).count();
  };
  // The data part of the residual: residual(0).
  backend_.fill(q.data(), T(0), n);
  stepper->residual(q.data(), 0.0, data.data());
  // A x into out: residual(x) - residual(0).
  const auto apply = [&](const T* x, T* out) {
    stepper->residual(x, 0.0, out);
    backend_.axpy(T(-1), data.data(), out, n);
  };
  // z = M r: the preconditioner of W^-1 r.
  const auto precondition = [&] {
    backend_.copy(r.data(), scratch.data(), n);
    scale_boundary_faces(diffusion_, backend_, T(2), scratch.data());  // W^-1
    preconditioner.apply(scratch.data(), z.data());
  };
  // A singular problem's r back onto zero sum (rounding drifts it along the null space).
  const auto project = [&] {
    if (singular_) backend_.add_constant(r.data(), -backend_.difference_norms(r.data(), nullptr, n).sum / points, n);
  };

  stepper->residual(u, 0.0, r.data());
  const double first = std::sqrt(backend_.difference_norms(r.data(), nullptr, n).sum_squares);
  if (!std::isfinite(first)) {
    report.non_finite = true;
    report.iterations = 1;
    finish();
    return report;
  }
  report.initial_residual = first > 0 ? first : 1.0;
  scale_boundary_faces(diffusion_, backend_, T(0.5), r.data());  // W
  project();
  const double weighted_first = std::sqrt(backend_.dot(r.data(), r.data(), n));
  double target = options_.tol;  // in the weighted norm; tightened if the true residual lags
  double best_true = std::numeric_limits<double>::infinity();
  precondition();
  backend_.copy(z.data(), p.data(), n);
  double rz = backend_.dot(r.data(), z.data(), n);
  for (long k = 0; k < options_.max_iter && first > 0; ++k) {
    apply(p.data(), q.data());
    scale_boundary_faces(diffusion_, backend_, T(0.5), q.data());  // q = W A p = -S p
    const double pq = -backend_.dot(p.data(), q.data(), n);
    const double alpha = rz / pq;
    if (!std::isfinite(alpha)) {
      report.non_finite = true;
      report.iterations = k + 1;
      finish();
      return report;
    }
    backend_.axpy(static_cast<T>(alpha), p.data(), u, n);
    backend_.axpy(static_cast<T>(alpha), q.data(), r.data(), n);  // r - alpha S p
    project();
    report.iterations = k + 1;
    const double relative = std::sqrt(backend_.dot(r.data(), r.data(), n)) / weighted_first;
    report.history.push_back(relative);
    if (progress) progress(k + 1, relative);
    if (relative <= target) {
      // The weighted norm counts face nodes at a half: confirm on the true residual.
      stepper->residual(u, 0.0, scratch.data());
      const double true_relative =
          std::sqrt(backend_.difference_norms(scratch.data(), nullptr, n).sum_squares) / report.initial_residual;
      if (true_relative <= options_.tol) break;
      // The precision's floor: the recurrence's residual still falls, the true one no longer
      // (float at 513^3: 38 more iterations at 2.0e-3 before the window below saw it).
      if (true_relative > 0.9 * best_true) {
        report.stagnated = true;
        break;
      }
      best_true = true_relative;
      target = relative * options_.tol / true_relative;
    }
    if (stop && stop()) {
      report.stopped = true;
      break;
    }
    // The precision's rounding floor: 20 iterations without a 10% gain end the solve.
    constexpr std::size_t kWindow = 20;
    if (report.history.size() > kWindow) {
      const auto recent = report.history.end() - static_cast<std::ptrdiff_t>(kWindow);
      if (*std::min_element(recent, report.history.end()) > 0.9 * *std::min_element(report.history.begin(), recent)) {
        report.stagnated = true;
        break;
      }
    }
    precondition();
    // Flexible beta: r_new - r_old = alpha q, so z_new . (r_new - r_old) = alpha z_new . q
    // (equal to z_new . r_new / rz where M is symmetric, as the direct solve is).
    const double beta = alpha * backend_.dot(z.data(), q.data(), n) / rz;
    rz = backend_.dot(r.data(), z.data(), n);
    // p = z + beta p, into scratch, then swapped in.
    backend_.copy(z.data(), scratch.data(), n);
    backend_.axpy(static_cast<T>(beta), p.data(), scratch.data(), n);
    std::swap(p, scratch);
  }
  adi_.finish(*stepper, u, report);
  finish();
  if (!std::isfinite(report.relative_residual)) report.non_finite = true;
  if (report.converged) report.stagnated = false;
  return report;
}

template std::string krylov_obstacle(const Diffusion<float>&, const Forcing<float>&, KrylovPreconditioner);
template std::string krylov_obstacle(const Diffusion<double>&, const Forcing<double>&, KrylovPreconditioner);
template bool krylov_scales(const Diffusion<float>&, Backend<float>&);
template bool krylov_scales(const Diffusion<double>&, Backend<double>&);
template KrylovPreconditioner krylov_preconditioner(const Diffusion<float>&, const Forcing<float>&,
                                                    KrylovPreconditioner);
template KrylovPreconditioner krylov_preconditioner(const Diffusion<double>&, const Forcing<double>&,
                                                    KrylovPreconditioner);
template class PoissonKrylov<float>;
template class PoissonKrylov<double>;

}  // namespace adi3d
