#include "solvers/poisson_spectral.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace adi3d {

template <class T>
SpectralObstacle spectral_obstacle(const Diffusion<T>& d) {
  if (d.slab.distributed()) return {-1, "the run is split over ranks (the direct solve runs on one rank for now)"};
  return spectral_obstacle(d.bc, !d.alpha_field.empty() || d.backend_alpha != nullptr);
}

template <class T>
PoissonSpectral<T>::PoissonSpectral(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                    PoissonOptions options)
    : backend_(backend), diffusion_(diffusion), adi_(backend, diffusion, forcing, options) {
  const SpectralObstacle obstacle = spectral_obstacle(diffusion);
  if (!obstacle.none()) throw std::invalid_argument("the direct Poisson solve does not apply: " + obstacle.why);
}

template <class T>
PoissonSpectral<T>::~PoissonSpectral() = default;

template <class T>
PoissonReport PoissonSpectral<T>::solve(T* u) {
  PoissonReport report;
  report.method = "spectral";
  adi_.make_compatible(report);
  const std::unique_ptr<DouglasStepper<T>> stepper = adi_.make_stepper();
  stepper->initialize(u, 0.0);
  if (!kernel_) {
    const auto start = std::chrono::steady_clock::now();
    kernel_ = backend_.make_spectral_solve(stepper->view());
    if (!kernel_) throw BackendUnavailable(backend_.description() + " has no direct Poisson solve");
    backend_.synchronize();
    report.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const std::size_t n = diffusion_.grid.size();
  T* r = stepper->scratch();
  stepper->residual(u, 0.0, r);
  const Norms first = backend_.difference_norms(r, nullptr, n);
  const double residual = std::sqrt(first.sum_squares);
  if (!std::isfinite(first.max_abs) || !std::isfinite(residual)) {
    report.non_finite = true;
    report.iterations = 1;
    return report;
  }
  report.initial_residual = residual > 0 ? residual : 1.0;
  report.history.push_back(residual / report.initial_residual);
  kernel_->solve(r, u);
  report.iterations = 1;
  adi_.finish(*stepper, u, report);
  if (!std::isfinite(report.relative_residual)) report.non_finite = true;
  // A direct solve ends where the precision's rounding leaves it.
  if (!report.converged && !report.non_finite) report.stagnated = true;
  return report;
}

template SpectralObstacle spectral_obstacle(const Diffusion<float>&);
template SpectralObstacle spectral_obstacle(const Diffusion<double>&);
template class PoissonSpectral<float>;
template class PoissonSpectral<double>;

}  // namespace adi3d
