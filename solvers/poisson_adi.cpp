#include "solvers/poisson_adi.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace adi3d {

// Implicit weight of the iteration. theta = 1 is Douglas-Rachford proper; theta = 1/2
// gives the per-mode factor 1 - 2 tau S / prod(1 + tau lambda_i) (S = sum lambda_i), the
// 3D analogue of Peaceman-Rachford's (1 - tau lambda)/(1 + tau lambda), still below 1 in
// magnitude for every tau > 0. Measured (CPU, inputs/poisson_*.ini, tol 1e-8):
// iterations theta = 1 / theta = 1/2: Dirichlet n=33 72/22, n=129 86/27; Neumann n=65
// 108/48; periodic n=64 93/33.
constexpr double kIterationTheta = 0.5;

template <class T>
SpectrumBounds spectrum_bounds(const Diffusion<T>& d, const std::array<std::array<double, 2>, 6>& robin_h) {
  double amin[3], amax[3];
  for (int a = 0; a < 3; ++a) amin[a] = amax[a] = d.alpha[a];
  if (d.backend_alpha) {  // its range was taken where it was sampled
    for (int a = 0; a < 3; ++a) {
      amin[a] = d.whole_alpha_range[0];
      amax[a] = d.whole_alpha_range[1];
    }
  } else if (!d.alpha_field.empty()) {
    const auto [lo, hi] = std::minmax_element(d.alpha_field.begin(), d.alpha_field.end());
    const bool whole = d.slab.distributed();
    for (int a = 0; a < 3; ++a) {
      amin[a] = whole ? d.whole_alpha_range[0] : *lo;
      amax[a] = whole ? d.whole_alpha_range[1] : *hi;
    }
  }
  double lmin = 0, lmax = 0, smallest_nonzero = INFINITY;
  const Grid3& g = d.whole_grid();
  const BoundarySpec& bc = d.whole_bc();
  for (int a = 0; a < 3; ++a) {
    const double length = g.h[a] * (bc.periodic(a) ? g.n[a] : g.n[a] - 1);
    const int dirichlet = (bc.lo(a) == BoundaryKind::dirichlet) + (bc.hi(a) == BoundaryKind::dirichlet);
    // Lowest mode of -d2/dx2 on the axis: sin (two Dirichlet ends), quarter wave (one),
    // and for Neumann-Neumann or periodic the constant (0) then the first non-constant.
    auto lowest = [length](int ends) {
      const double k = ends == 2 ? M_PI / length : ends == 1 ? M_PI / (2 * length) : 0.0;
      return k * k;
    };
    double k2 = lowest(dirichlet);
    // Robin ends (conductance h / alpha each) lie between Neumann and Dirichlet ends: a
    // weak one lifts the lowest mode by about (sum h / alpha) / L, a strong one to the
    // Dirichlet value; the blend stays below both.
    const double conductance = (robin_h[face_index(a, 0)][0] + robin_h[face_index(a, 1)][0]) / amax[a];
    const int robin = (bc.lo(a) == BoundaryKind::robin) + (bc.hi(a) == BoundaryKind::robin);
    if (robin > 0 && conductance > 0) k2 += 1.0 / (1.0 / (lowest(dirichlet + robin) - k2) + length / conductance);
    const double first_nonconstant = bc.periodic(a) ? 2 * M_PI / length : M_PI / length;
    lmin += amin[a] * k2;
    smallest_nonzero = std::min(smallest_nonzero, amin[a] * first_nonconstant * first_nonconstant);
    // Gershgorin: a Robin end row adds beta = 2 h / h_grid to its diagonal.
    lmax += 4 * amax[a] / (g.h[a] * g.h[a]) +
            2 * std::max(robin_h[face_index(a, 0)][1], robin_h[face_index(a, 1)][1]) / g.h[a];
  }
  return {lmin > 0 ? lmin : smallest_nonzero, lmax};
}

std::vector<double> adi_parameters(SpectrumBounds b, int cycle) {
  const double spread = b.lambda_max / b.lambda_min;
  if (cycle <= 0) cycle = std::max(2, static_cast<int>(std::ceil(std::log(spread) / std::log(4.0))));
  std::vector<double> taus(cycle);
  // Largest step first: it removes the smooth error that dominates an arbitrary guess.
  for (int j = 0; j < cycle; ++j)
    taus[j] = 1.0 / (b.lambda_min * std::pow(spread, static_cast<double>(j) / std::max(1, cycle - 1)));
  return taus;
}

template <class T>
std::array<std::array<double, 2>, 6> robin_h_ranges(const BoundarySpec& bc, const Forcing<T>& forcing) {
  std::array<std::array<double, 2>, 6> ranges{};
  for (int f = 0; f < 6; ++f)
    if (bc.face[f] == BoundaryKind::robin) ranges[f] = forcing.robin_h_range(f);
  return ranges;
}

// Float's rounding floor: A u in float carries errors of about eps lambda_max |u|, against
// a residual of the data's modes, down to lambda_min |u|. Measured floors (CPU, from u = 0,
// eps = FLT_EPSILON), as c in c eps lambda_max / lambda_min: data in the lowest mode 0.13
// to 0.14 (Neumann f = pi^2 cos(pi x): 2.1e-5, 8.3e-5, 3.2e-4 at n = 33, 65, 129; periodic
// f = 4 pi^2 sin(2 pi x): 5.6e-6, 2.1e-5, 8.1e-5 at n = 32, 64, 128); inputs/poisson_neumann
// and poisson_periodic.ini 0.02 to 0.06; poisson_dirichlet.ini, whose initial residual is
// its boundary values' jump, reached 1e-6 at every size. The default, c = 0.5, stays 3.5x
// above the worst. An alpha field's least value makes lambda_min, and so the estimate, as
// small as its contrast: inputs/chip_vias.ini's (1000) gave 140 at 257^3, a tolerance every
// solve meets at once. The default stops at 1e-3; a solve that cannot reach it stagnates
// and says so.
template <class T>
double default_tolerance(const Diffusion<T>& d, const std::array<std::array<double, 2>, 6>& robin_h) {
  if (!std::is_same_v<T, float>) return 1e-8;
  const SpectrumBounds b = spectrum_bounds(d, robin_h);
  return std::clamp(0.5 * std::numeric_limits<float>::epsilon() * b.lambda_max / b.lambda_min, 1e-5, 1e-3);
}

// The deck's forcing with a constant removed from the source (compatibility projection).
template <class T>
class PoissonAdi<T>::CompatibleForcing final : public Forcing<T> {
 public:
  CompatibleForcing(const Forcing<T>& inner, std::size_t points) : inner_(inner), points_(points) {}
  void set_shift(double shift) { shift_ = shift; }
  bool has_source() const override { return inner_.has_source() || shift_ != 0; }
  bool source_depends_on_time() const override { return false; }
  void source(double, T* out) const override {
    if (inner_.has_source())
      inner_.source(0.0, out);
    else
      std::fill(out, out + points_, T(0));
    if (shift_ != 0)
      for (std::size_t p = 0; p < points_; ++p) out[p] = static_cast<T>(out[p] - shift_);
  }
  // Sampling the source on the host can cost more than the whole GPU solve: forward the
  // backend path, the shift taken there too (on the host, a singular problem's shifted
  // source took about 1.9 s of a 2.3 s solve at 512^3 double on an H100).
  bool source_on_backend(double, T* values, Backend<T>& backend) const override {
    if (!inner_.has_source()) {
      backend.fill(values, static_cast<T>(-shift_), points_);
      return true;
    }
    if (!inner_.source_on_backend(0.0, values, backend)) return false;
    if (shift_ != 0) backend.add_constant(values, -shift_, points_);
    return true;
  }
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int face) const override { return inner_.boundary_is_zero(face); }
  void boundary(int face, double, T* out) const override { inner_.boundary(face, 0.0, out); }
  bool boundary_on_backend(int face, double, T* values, Backend<T>& backend) const override {
    return inner_.boundary_on_backend(face, 0.0, values, backend);
  }
  std::optional<double> robin_h_constant(int face) const override { return inner_.robin_h_constant(face); }
  std::array<double, 2> robin_h_range(int face) const override { return inner_.robin_h_range(face); }
  void robin_h(int face, double, T* out) const override { inner_.robin_h(face, 0.0, out); }
  bool robin_h_on_backend(int face, double, T* values, Backend<T>& backend) const override {
    return inner_.robin_h_on_backend(face, 0.0, values, backend);
  }

 private:
  const Forcing<T>& inner_;
  std::size_t points_;
  double shift_ = 0;
};

template <class T>
PoissonAdi<T>::PoissonAdi(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                          PoissonOptions options)
    : backend_(backend), diffusion_(diffusion), options_(options), bounds_(spectrum_bounds(diffusion, robin_h_ranges(diffusion.whole_bc(), forcing))),
      forcing_(std::make_unique<CompatibleForcing>(forcing, diffusion.grid.size())) {}

template <class T>
PoissonAdi<T>::~PoissonAdi() = default;

template <class T>
void scale_boundary_faces(const Diffusion<T>& d, Backend<T>& backend, T factor, T* x) {
  const Grid3& g = d.whole_grid();
  for (int a = 0; a < 3; ++a) {
    if (d.whole_bc().periodic(a)) continue;
    for (int side = 0; side < (g.n[a] > 1 ? 2 : 1); ++side)  // one node: one face
      if (!d.interface(face_index(a, side))) backend.scale_face(d.grid, face_index(a, side), factor, x);
  }
}

namespace {

// Weighted mean of f + Neumann terms (half-cell weights on the faces of non-periodic axes:
// 1/4 on their edges, 1/8 at their corners), from r, the residual of the zero field, and
// the weighted mean absolute value for scale. On the backend: r's faces halved in turn
// (so its edges and corners take the products), then one reduction (a download and a host
// pass took 2-3 s of a 3 s solve at 512^3 double on an H100).
// A distributed run halves the faces of the whole grid only (a ghost plane's r is zero, and
// the sums cover every rank's owned planes).
template <class T>
std::pair<double, double> data_mean(const Diffusion<T>& d, Backend<T>& backend, T* r) {
  const Grid3& g = d.whole_grid();
  scale_boundary_faces(d, backend, T(0.5), r);
  // Each node's weight along an axis: 1/2 at both ends (one node: 1/2, the axis's sum).
  double weights = 1;
  for (int a = 0; a < 3; ++a) weights *= d.whole_bc().periodic(a) ? g.n[a] : (g.n[a] > 1 ? g.n[a] - 1 : 0.5);
  const Norms sums = backend.difference_norms(r, nullptr, d.grid.size());
  return {sums.sum / weights, sums.sum_abs / weights};
}

}  // namespace

template <class T>
PoissonReport PoissonAdi<T>::solve(T* u, const std::function<void(long, double)>& progress,
                                   const std::function<bool()>& stop) {
  PoissonReport report;
  make_compatible(report);
  const std::unique_ptr<DouglasStepper<T>> stepper = make_stepper();
  stepper->initialize(u, 0.0);
  iterate(*stepper, u, report, progress, stop);
  if (!report.non_finite) finish(*stepper, u, report);
  return report;
}

template <class T>
bool anchored(const BoundarySpec& bc, const Forcing<T>& forcing) {
  bool fixed = bc.has_dirichlet();
  for (const auto& range : robin_h_ranges(bc, forcing)) fixed = fixed || range[1] > 0;
  return fixed;
}

template <class T>
bool PoissonAdi<T>::singular() const {
  return !anchored(diffusion_.whole_bc(), *forcing_);
}

template <class T>
const Forcing<T>& PoissonAdi<T>::forcing() const {
  return *forcing_;
}

template <class T>
std::unique_ptr<DouglasStepper<T>> PoissonAdi<T>::make_stepper() const {
  return std::make_unique<DouglasStepper<T>>(backend_, diffusion_, *forcing_, kIterationTheta);
}

template <class T>
void PoissonAdi<T>::make_compatible(PoissonReport& report) {
  const std::size_t n = diffusion_.grid.size();
  if (singular()) {
    forcing_->set_shift(0);  // measured on the data itself, however often the solve runs
    DouglasStepper<T> probe(backend_, diffusion_, *forcing_, 1.0);
    Array<T> zero = backend_.allocate(n), r = backend_.allocate(n);
    backend_.fill(zero.data(), T(0), n);
    probe.residual(zero.data(), 0.0, r.data());
    const auto [mean, scale] = data_mean(diffusion_, backend_, r.data());
    // Quadrature of smooth compatible data leaves O(h^2) of the scale; more is a mistake.
    if (std::fabs(mean) > 0.05 * scale && std::fabs(mean) > 1e-12) {
      std::ostringstream msg;
      msg << "the problem has no Dirichlet face, so f and the Neumann fluxes must balance, "
             "but their mean is "
          << mean << " (mean magnitude " << scale << ")";
      throw IncompatibleData(msg.str());
    }
    report.source_shift = mean;
    forcing_->set_shift(mean);  // f - mean: the weighted sum of the data is now zero
  }
}

template <class T>
void PoissonAdi<T>::iterate(DouglasStepper<T>& stepper, T* u, PoissonReport& report,
                            const std::function<void(long, double)>& progress,
                            const std::function<bool()>& stop, long phase) const {
  report.lambda_min = bounds_.lambda_min;
  report.lambda_max = bounds_.lambda_max;
  report.taus = parameters();

  Norms rhs{};
  for (long k = 0; k < options_.max_iter; ++k) {
    const double tau = report.taus[(phase + k) % report.taus.size()];
    // The step's implicit factors use theta * dt = tau; its right-hand side is dt times
    // the residual.
    const double dt = tau / kIterationTheta;
    stepper.step(u, 0.0, dt, &rhs);
    const double residual = std::sqrt(rhs.sum_squares) / dt;
    // The norms carry a NaN (nan_norms.hpp) and an infinity, and the sum of squares
    // overflows first: no iteration brings that back, and the caller says where it went.
    if (!std::isfinite(rhs.max_abs) || !std::isfinite(residual)) {
      report.non_finite = true;
      report.iterations = k + 1;
      return;
    }
    if (k == 0) report.initial_residual = residual > 0 ? residual : 1.0;
    const double relative = residual / report.initial_residual;
    report.history.push_back(relative);
    report.iterations = k + 1;
    if (progress) progress(k + 1, relative);
    if (relative <= options_.tol) {
      report.converged = true;
      break;
    }
    if (stop && stop()) {
      report.stopped = true;
      break;
    }
    // Rounding floor: three whole cycles without a 10% gain cannot be fixed by iterating.
    const std::size_t window = 3 * report.taus.size();
    if (report.history.size() > window) {
      const auto recent = report.history.end() - static_cast<std::ptrdiff_t>(window);
      const double before = *std::min_element(report.history.begin(), recent);
      if (*std::min_element(recent, report.history.end()) > 0.9 * before) {
        report.stagnated = true;
        break;
      }
    }
  }
}

template <class T>
void PoissonAdi<T>::finish(DouglasStepper<T>& stepper, T* u, PoissonReport& report) {
  const std::size_t n = diffusion_.grid.size();
  if (singular()) {
    const double mean =
        backend_.difference_norms(u, nullptr, n).sum / static_cast<double>(diffusion_.whole_grid().size());
    backend_.add_constant(u, -mean, n);  // in place: no grid-sized array at the end of a solve
  }
  T* r = stepper.scratch();
  stepper.residual(u, 0.0, r);
  report.relative_residual =
      std::sqrt(backend_.difference_norms(r, nullptr, n).sum_squares) / report.initial_residual;
  if (report.relative_residual <= options_.tol) report.converged = true;
}

template double default_tolerance(const Diffusion<float>&, const std::array<std::array<double, 2>, 6>&);
template double default_tolerance(const Diffusion<double>&, const std::array<std::array<double, 2>, 6>&);
template SpectrumBounds spectrum_bounds(const Diffusion<float>&, const std::array<std::array<double, 2>, 6>&);
template SpectrumBounds spectrum_bounds(const Diffusion<double>&, const std::array<std::array<double, 2>, 6>&);
template bool anchored(const BoundarySpec&, const Forcing<float>&);
template bool anchored(const BoundarySpec&, const Forcing<double>&);
template void scale_boundary_faces(const Diffusion<float>&, Backend<float>&, float, float*);
template void scale_boundary_faces(const Diffusion<double>&, Backend<double>&, double, double*);
template std::array<std::array<double, 2>, 6> robin_h_ranges(const BoundarySpec&, const Forcing<float>&);
template std::array<std::array<double, 2>, 6> robin_h_ranges(const BoundarySpec&, const Forcing<double>&);
template class PoissonAdi<float>;
template class PoissonAdi<double>;

}  // namespace adi3d
