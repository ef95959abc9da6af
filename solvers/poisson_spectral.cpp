#include "solvers/poisson_spectral.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace adi3d {

template <class T>
const T* host_alpha_field(const Diffusion<T>& d, Backend<T>& backend, std::vector<T>& downloaded) {
  if (!d.alpha_field.empty()) return d.alpha_field.data();
  if (!d.backend_alpha) return nullptr;
  downloaded.resize(d.grid.size());
  backend.download(d.backend_alpha, downloaded.data(), d.grid.size());
  return downloaded.data();
}

template <class T>
std::optional<SpectralLayers<T>> spectral_layers(const Diffusion<T>& d, Backend<T>& backend) {
  const Grid3& g = d.grid;
  std::vector<T> downloaded;
  const T* field = host_alpha_field(d, backend, downloaded);
  SpectralLayers<T> layers;
  if (!field) return layers;
  const std::size_t plane = static_cast<std::size_t>(g.n[0]) * g.n[1];
  for (int k = 0; k < g.n[2]; ++k) {
    const T* p = field + plane * k;
    for (std::size_t e = 1; e < plane; ++e)
      if (!(p[e] == p[0])) return std::nullopt;
    layers.alpha.push_back(p[0]);
  }
  return layers;
}

template <class T>
SpectralObstacle spectral_face_obstacle(const Diffusion<T>& d, const Forcing<T>& forcing) {
  std::array<bool, 2> varies{};
  for (int side = 0; side < 2; ++side)
    varies[side] = d.bc.face[4 + side] == BoundaryKind::robin && !forcing.robin_h_constant(4 + side).has_value();
  return spectral_obstacle(d.bc, false, varies);
}

template <class T>
SpectralObstacle spectral_obstacle(const Diffusion<T>& d, const Forcing<T>& forcing, Backend<T>& backend) {
  if (d.slab.distributed()) return {-1, "the run is split over ranks (the direct solve runs on one rank for now)"};
  const SpectralObstacle faces = spectral_face_obstacle(d, forcing);
  if (!faces.none()) return faces;
  return spectral_obstacle(d.bc, !spectral_layers(d, backend).has_value());
}

template <class T>
PoissonSpectral<T>::PoissonSpectral(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                    PoissonOptions options)
    : backend_(backend), diffusion_(diffusion), adi_(backend, diffusion, forcing, options) {
  SpectralObstacle obstacle = spectral_face_obstacle(diffusion, forcing);
  if (diffusion.slab.distributed()) obstacle = spectral_obstacle(diffusion, forcing, backend);
  std::optional<SpectralLayers<T>> layers;
  if (obstacle.none()) {
    layers = spectral_layers(diffusion, backend);
    if (!layers) obstacle = spectral_obstacle(diffusion.bc, true);
  }
  if (!obstacle.none()) throw std::invalid_argument("the direct Poisson solve does not apply: " + obstacle.why);
  layers_ = std::move(*layers);
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
    kernel_ = backend_.make_spectral_solve(stepper->view(), layers_);
    if (!kernel_) throw BackendUnavailable(backend_.description() + " has no direct Poisson solve");
    backend_.synchronize();
    report.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const std::size_t n = diffusion_.grid.size();
  backend_.synchronize();
  const auto solve_start = std::chrono::steady_clock::now();
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
  backend_.synchronize();
  report.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - solve_start).count();
  if (!std::isfinite(report.relative_residual)) report.non_finite = true;
  // A direct solve ends where the precision's rounding leaves it.
  if (!report.converged && !report.non_finite) report.stagnated = true;
  return report;
}

template const float* host_alpha_field(const Diffusion<float>&, Backend<float>&, std::vector<float>&);
template const double* host_alpha_field(const Diffusion<double>&, Backend<double>&, std::vector<double>&);
template std::optional<SpectralLayers<float>> spectral_layers(const Diffusion<float>&, Backend<float>&);
template std::optional<SpectralLayers<double>> spectral_layers(const Diffusion<double>&, Backend<double>&);
template SpectralObstacle spectral_face_obstacle(const Diffusion<float>&, const Forcing<float>&);
template SpectralObstacle spectral_face_obstacle(const Diffusion<double>&, const Forcing<double>&);
template SpectralObstacle spectral_obstacle(const Diffusion<float>&, const Forcing<float>&, Backend<float>&);
template SpectralObstacle spectral_obstacle(const Diffusion<double>&, const Forcing<double>&, Backend<double>&);
template class PoissonSpectral<float>;
template class PoissonSpectral<double>;

}  // namespace adi3d
