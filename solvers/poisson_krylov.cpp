#include "solvers/poisson_krylov.hpp"

#include "solvers/poisson_spectral.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace adi3d {
namespace {

// Each z plane's mean alpha (empty where alpha is constant): the preconditioner's problem.
template <class T>
SpectralLayers<T> plane_means(const Diffusion<T>& d, Backend<T>& backend) {
  const Grid3& g = d.grid;
  std::vector<T> downloaded;
  const T* field = host_alpha_field(d, backend, downloaded);
  SpectralLayers<T> layers;
  if (!field) return layers;
  const std::size_t plane = static_cast<std::size_t>(g.n[0]) * g.n[1];
  for (int k = 0; k < g.n[2]; ++k) {
    double sum = 0;
    for (std::size_t e = 0; e < plane; ++e) sum += field[plane * static_cast<std::size_t>(k) + e];
    layers.alpha.push_back(static_cast<T>(sum / static_cast<double>(plane)));
  }
  return layers;
}

}  // namespace

template <class T>
std::string krylov_obstacle(const Diffusion<T>& diffusion, const Forcing<T>& forcing) {
  if (diffusion.slab.distributed()) return "the run is split over ranks (the Krylov solve runs on one rank for now)";
  if (!anchored(diffusion.whole_bc(), forcing))
    return "no Dirichlet face and no Robin face anchors u (the Krylov solve does not take singular problems yet)";
  const SpectralObstacle faces = spectral_face_obstacle(diffusion, forcing);
  if (!faces.none()) return "its preconditioner, the direct solve, does not take these faces: " + faces.why;
  return "";
}

template <class T>
PoissonKrylov<T>::PoissonKrylov(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                PoissonOptions options)
    : backend_(backend), diffusion_(diffusion), options_(options), adi_(backend, diffusion, forcing, options) {
  const std::string obstacle = krylov_obstacle(diffusion, forcing);
  if (!obstacle.empty()) throw std::invalid_argument("the Krylov Poisson solve does not apply: " + obstacle);
  plane_means_ = plane_means(diffusion, backend);
}

template <class T>
PoissonKrylov<T>::~PoissonKrylov() = default;

template <class T>
PoissonReport PoissonKrylov<T>::solve(T* u, const std::function<void(long, double)>& progress,
                                      const std::function<bool()>& stop) {
  PoissonReport report;
  report.method = "krylov";
  adi_.make_compatible(report);
  const std::unique_ptr<DouglasStepper<T>> stepper = adi_.make_stepper();
  stepper->initialize(u, 0.0);
  if (!preconditioner_) {
    preconditioner_ = backend_.make_spectral_solve(stepper->view(), plane_means_);
    if (!preconditioner_) throw BackendUnavailable(backend_.description() + " has no direct Poisson solve");
  }
  const std::size_t n = diffusion_.grid.size();
  Array<T> r = backend_.allocate(n), z = backend_.allocate(n), p = backend_.allocate(n), q = backend_.allocate(n),
           data = backend_.allocate(n), scratch = backend_.allocate(n);
  // The data part of the residual: residual(0).
  backend_.fill(q.data(), T(0), n);
  stepper->residual(q.data(), 0.0, data.data());
  // A x into out: residual(x) - residual(0).
  const auto apply = [&](const T* x, T* out) {
    stepper->residual(x, 0.0, out);
    backend_.axpy(T(-1), data.data(), out, n);
  };
  // z = M r = (-A0)^-1 W^-1 r (the direct solve transforms its input in place).
  const auto precondition = [&] {
    backend_.copy(r.data(), scratch.data(), n);
    scale_boundary_faces(diffusion_, backend_, T(2), scratch.data());  // W^-1
    backend_.fill(z.data(), T(0), n);
    preconditioner_->solve(scratch.data(), z.data());
  };

  stepper->residual(u, 0.0, r.data());
  const double first = std::sqrt(backend_.difference_norms(r.data(), nullptr, n).sum_squares);
  if (!std::isfinite(first)) {
    report.non_finite = true;
    report.iterations = 1;
    return report;
  }
  report.initial_residual = first > 0 ? first : 1.0;
  scale_boundary_faces(diffusion_, backend_, T(0.5), r.data());  // W
  const double weighted_first = std::sqrt(backend_.dot(r.data(), r.data(), n));
  double target = options_.tol;  // in the weighted norm; tightened if the true residual lags
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
      return report;
    }
    backend_.axpy(static_cast<T>(alpha), p.data(), u, n);
    backend_.axpy(static_cast<T>(alpha), q.data(), r.data(), n);  // r - alpha S p
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
    const double rz_next = backend_.dot(r.data(), z.data(), n);
    const double beta = rz_next / rz;
    rz = rz_next;
    // p = z + beta p, into scratch, then swapped in.
    backend_.copy(z.data(), scratch.data(), n);
    backend_.axpy(static_cast<T>(beta), p.data(), scratch.data(), n);
    std::swap(p, scratch);
  }
  adi_.finish(*stepper, u, report);
  if (!std::isfinite(report.relative_residual)) report.non_finite = true;
  if (report.converged) report.stagnated = false;
  return report;
}

template std::string krylov_obstacle(const Diffusion<float>&, const Forcing<float>&);
template std::string krylov_obstacle(const Diffusion<double>&, const Forcing<double>&);
template class PoissonKrylov<float>;
template class PoissonKrylov<double>;

}  // namespace adi3d
