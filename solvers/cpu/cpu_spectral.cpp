// The CPU's direct solve of -A e = r (spectral_solve.hpp). Each unknown z plane is
// transformed along x and y in place by one FFTW plan of real transforms (RODFT00 = DST-I
// over the interior of a Dirichlet axis, REDFT00 = DCT-I over a Neumann axis, R2HC over a
// periodic one), planned once on a plane and run on every plane by OpenMP; then each row
// of modes is solved along z by Thomas, vectorised across the row's modes (alpha of z alone
// scaling each plane's x and y eigenvalues; cyclic z by Sherman-Morrison; the singular constant mode with its first node pinned), and
// transformed back (HC2R for periodic axes). Both transforms are unnormalised: the z
// solve divides by their product.
#include "solvers/cpu/cpu_spectral.hpp"

#include "solvers/poison.hpp"
#include "solvers/spectral_rows.hpp"

#include <fftw3.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d::cpu {
namespace {

// FFTW's planner is not thread-safe; executing plans is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class T>
struct Fftw;
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  static plan make(const int* n, double* data, const int* embed, const fftw_r2r_kind* kind) {
    return fftw_plan_many_r2r(2, n, 1, data, embed, 1, 0, data, embed, 1, 0, kind, FFTW_MEASURE | FFTW_UNALIGNED);
  }
  static void run(plan p, double* data) { fftw_execute_r2r(p, data, data); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  static plan make(const int* n, float* data, const int* embed, const fftw_r2r_kind* kind) {
    return fftwf_plan_many_r2r(2, n, 1, data, embed, 1, 0, data, embed, 1, 0, kind, FFTW_MEASURE | FFTW_UNALIGNED);
  }
  static void run(plan p, float* data) { fftwf_execute_r2r(p, data, data); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};

fftw_r2r_kind fftw_kind(SpectralAxis kind, bool forward) {
  switch (kind) {
    case SpectralAxis::sine:
      return FFTW_RODFT00;
    case SpectralAxis::cosine:
      return FFTW_REDFT00;
    default:
      return forward ? FFTW_R2HC : FFTW_HC2R;
  }
}

template <class T>
class CpuSpectralSolve final : public SpectralSolve<T> {
 public:
  CpuSpectralSolve(const OperatorView<T>& op, const SpectralLayers<T>& layers) : op_(op) {
    const bool layered = !layers.alpha.empty();
    const BoundarySpec bc = spec_of(op);
    for (int a = 0; a < 3; ++a) range_[a] = unknown_range(op.n[a], op.lo[a], op.hi[a]);
    double normalisation = 1;
    for (int a = 0; a < 2; ++a) {
      kind_[a] = spectral_axis(bc, a);
      const double w = axis_weight(op, a, layered);
      lambda_[a].resize(static_cast<std::size_t>(range_[a].count));
      for (int q = 0; q < range_[a].count; ++q)
        lambda_[a][q] = stored_mode_eigenvalue(kind_[a], w, range_[a].first + q, op.n[a]);
      normalisation *= spectral_period(kind_[a], op.n[a]);
    }
    scale_ = static_cast<T>(1.0 / normalisation);
    singular_ = spectral_singular(op);
    periodic_z_ = op.lo[2] == BoundaryKind::periodic;
    for (int k = 0; k < op.n[2]; ++k) z_rows_.push_back(spectral_z_row(op, k, layered ? layers.alpha.data() : nullptr));
    const int n[2] = {range_[1].count, range_[0].count};  // FFTW's order: slowest first
    const int embed[2] = {op.n[1], op.n[0]};
    const fftw_r2r_kind forward[2] = {fftw_kind(kind_[1], true), fftw_kind(kind_[0], true)};
    const fftw_r2r_kind backward[2] = {fftw_kind(kind_[1], false), fftw_kind(kind_[0], false)};
    std::vector<T> plane(static_cast<std::size_t>(op.n[0]) * op.n[1]);
    T* first = plane.data() + offset_in_plane();
    std::lock_guard<std::mutex> lock(planner_mutex());
    forward_ = Fftw<T>::make(n, first, embed, forward);
    backward_ = Fftw<T>::make(n, first, embed, backward);
    if (!forward_ || !backward_) throw std::runtime_error("FFTW could not plan the direct solve's transforms");
  }
  ~CpuSpectralSolve() override {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (forward_) Fftw<T>::destroy(forward_);
    if (backward_) Fftw<T>::destroy(backward_);
  }
  CpuSpectralSolve(const CpuSpectralSolve&) = delete;
  CpuSpectralSolve& operator=(const CpuSpectralSolve&) = delete;

  void solve(T* r, T* u) override {
    transform_planes(forward_, r);
    solve_z(r);
    transform_planes(backward_, r);
    add_unknowns(r, u);
  }

 private:
  static BoundarySpec spec_of(const OperatorView<T>& op) {
    BoundarySpec bc;
    for (int a = 0; a < 3; ++a) bc.face[2 * a] = op.lo[a], bc.face[2 * a + 1] = op.hi[a];
    return bc;
  }
  std::size_t plane_size() const { return static_cast<std::size_t>(op_.n[0]) * op_.n[1]; }
  std::size_t offset_in_plane() const {
    return static_cast<std::size_t>(range_[0].first) + static_cast<std::size_t>(op_.n[0]) * range_[1].first;
  }

  void transform_planes(typename Fftw<T>::plan plan, T* r) const {
    const int k0 = range_[2].first, planes = range_[2].count;
#pragma omp parallel for schedule(static)
    for (int k = k0; k < k0 + planes; ++k) Fftw<T>::run(plan, r + plane_size() * k + offset_in_plane());
  }

  // Rows of modes (one y mode each), each solved along z by Thomas across its x modes.
  void solve_z(T* r) const {
    const int mx = range_[0].count, my = range_[1].count, nz = op_.n[2];
#pragma omp parallel
    {
      const std::size_t line_values = static_cast<std::size_t>(nz) * mx;
      std::vector<T> inv_diag = scratch_vector<T>(line_values), upper = scratch_vector<T>(line_values),
                     q = scratch_vector<T>(line_values), sigma = scratch_vector<T>(static_cast<std::size_t>(mx));
#pragma omp for schedule(static)
      for (int j = 0; j < my; ++j) {
        for (int i = 0; i < mx; ++i) sigma[i] = static_cast<T>(lambda_[0][i] + lambda_[1][j]);
        T* row = r + offset_in_plane() + static_cast<std::size_t>(op_.n[0]) * j;
        // Mode (0, 0) of a singular operator: the constant, pinned at its first node.
        const int skip = singular_ && j == 0 && range_[0].first == 0 && kind_[0] != SpectralAxis::sine &&
                         kind_[1] != SpectralAxis::sine;
        if (skip) solve_pinned(row);
        if (periodic_z_)
          solve_cyclic(row, sigma.data(), skip, mx, inv_diag.data(), upper.data(), q.data());
        else
          solve_line_block(row, sigma.data(), skip, mx, inv_diag.data(), upper.data());
      }
    }
  }

  // Thomas over the unknown planes for modes [begin, end) of a row (scratch rows of mx):
  // inv_diag and the normalised upper entries cp = -upper / pivot. cyclic: the ends of
  // Sherman-Morrison's T' (solve_cyclic).
  void factor(const T* sigma, int begin, int end, T* inv_diag, T* cp, int mx, bool cyclic = false) const {
    const int k0 = range_[2].first, k1 = k0 + range_[2].count - 1;
    for (int k = k0; k <= k1; ++k) {
      const SpectralZRow<T>& z = z_rows_[k];
      T* id = inv_diag + static_cast<std::size_t>(k) * mx;
      T* c = cp + static_cast<std::size_t>(k) * mx;
      // The first plane has no row above: nothing is read there (its scratch is unwritten,
      // and 0 x NaN would be NaN).
      const T* c_prev = k > k0 ? cp + static_cast<std::size_t>(k - 1) * mx : nullptr;
      const T lower = k == k0 ? T(0) : z.lower;
      const T upper = k == k1 ? T(0) : z.upper;
      const T corner = cyclic ? z_rows_[k0].lower * z.upper : T(0);
#pragma omp simd
      for (int i = begin; i < end; ++i) {
        T b = z.diag + z.scale * sigma[i];
        if (cyclic && k == k0) b += b;
        if (cyclic && k == k1) b += corner / (z_rows_[k0].diag + z_rows_[k0].scale * sigma[i]);
        id[i] = T(1) / (c_prev ? b + lower * c_prev[i] : b);
        c[i] = -upper * id[i];
      }
    }
  }
  // factor()'s forward and back substitution on x (x[stride k + i]: mode i on plane k),
  // the right-hand side taken times scale.
  void substitute(T* x, std::size_t stride, int begin, int end, const T* inv_diag, const T* cp, int mx,
                  T scale) const {
    const int k0 = range_[2].first, k1 = k0 + range_[2].count - 1;
    for (int k = k0; k <= k1; ++k) {
      T* xk = x + stride * k;
      const T* xp = k > k0 ? x + stride * (k - 1) : xk;
      const T lower = k == k0 ? T(0) : z_rows_[k].lower;
      const T* id = inv_diag + static_cast<std::size_t>(k) * mx;
#pragma omp simd
      for (int i = begin; i < end; ++i) xk[i] = (scale * xk[i] + lower * xp[i]) * id[i];
    }
    for (int k = k1 - 1; k >= k0; --k) {
      T* xk = x + stride * k;
      const T* xn = x + stride * (k + 1);
      const T* c = cp + static_cast<std::size_t>(k) * mx;
#pragma omp simd
      for (int i = begin; i < end; ++i) xk[i] -= c[i] * xn[i];
    }
  }

  void solve_line_block(T* row, const T* sigma, int begin, int mx, T* inv_diag, T* upper) const {
    factor(sigma, begin, mx, inv_diag, upper, mx);
    substitute(row, plane_size(), begin, mx, inv_diag, upper, mx, scale_);
  }

  // Cyclic z (Sherman-Morrison): the corners -lower_0 (row 0) and -upper_last (row n-1)
  // make A = T' + p v^T with gamma = -b_0, p = (gamma, 0..0, -upper_last),
  // v = (1, 0..0, -lower_0 / gamma); T' has b_0 - gamma first and b - upper_last lower_0 /
  // gamma last (factor's cyclic ends). e = y - (v.y / (1 + v.q)) q, T' y = r, T' q = p.
  void solve_cyclic(T* row, const T* sigma, int begin, int mx, T* inv_diag, T* upper, T* q) const {
    const int n = op_.n[2];
    factor(sigma, begin, mx, inv_diag, upper, mx, true);
    substitute(row, plane_size(), begin, mx, inv_diag, upper, mx, scale_);
    const T lower0 = z_rows_[0].lower, upper_last = z_rows_[n - 1].upper;
    for (int k = 0; k < n; ++k)
      for (int i = begin; i < mx; ++i) q[static_cast<std::size_t>(k) * mx + i] = 0;
    for (int i = begin; i < mx; ++i) {
      q[i] = -(z_rows_[0].diag + z_rows_[0].scale * sigma[i]);
      q[static_cast<std::size_t>(n - 1) * mx + i] = -upper_last;
    }
    substitute(q, static_cast<std::size_t>(mx), begin, mx, inv_diag, upper, mx, T(1));
    const std::size_t last = plane_size() * (n - 1);
    for (int i = begin; i < mx; ++i) {
      const T gamma = -(z_rows_[0].diag + z_rows_[0].scale * sigma[i]);
      const T vy = row[i] - lower0 / gamma * row[last + i];
      const T vq = q[i] - lower0 / gamma * q[static_cast<std::size_t>(n - 1) * mx + i];
      const T f = vy / (T(1) + vq);
      for (int k = 0; k < n; ++k) row[plane_size() * k + i] -= f * q[static_cast<std::size_t>(k) * mx + i];
    }
  }

  // The singular mode's line: node 0 held at 0, rows 1.. solved without it (the dropped
  // row 0 is the compatibility condition the caller's shift satisfied).
  void solve_pinned(T* row) const {
    const int n = op_.n[2];
    std::vector<T> c = scratch_vector<T>(static_cast<std::size_t>(n)), d = scratch_vector<T>(static_cast<std::size_t>(n));
    const std::size_t s = plane_size();
    T up_prev = 0, d_prev = 0;
    for (int k = 1; k < n; ++k) {
      const SpectralZRow<T>& z = z_rows_[k];
      const T lower = k == 1 ? T(0) : z.lower;
      const T upper = k == n - 1 ? T(0) : z.upper;
      const T den = z.diag - lower * up_prev;
      c[k] = upper / den;
      d[k] = (scale_ * row[s * k] + lower * d_prev) / den;
      up_prev = c[k];
      d_prev = d[k];
    }
    for (int k = n - 2; k >= 1; --k) d[k] += c[k] * d[k + 1];
    row[0] = 0;
    for (int k = 1; k < n; ++k) row[s * k] = d[k];
  }

  void add_unknowns(const T* e, T* u) const {
    const std::size_t nx = static_cast<std::size_t>(op_.n[0]);
    const int k0 = range_[2].first, j0 = range_[1].first, i0 = range_[0].first;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = k0; k < k0 + range_[2].count; ++k)
      for (int j = j0; j < j0 + range_[1].count; ++j) {
        const std::size_t p = nx * (static_cast<std::size_t>(j) + static_cast<std::size_t>(op_.n[1]) * k) + i0;
#pragma omp simd
        for (int i = 0; i < range_[0].count; ++i) u[p + i] += e[p + i];
      }
  }

  OperatorView<T> op_;
  SpectralRange range_[3];
  SpectralAxis kind_[2];
  std::vector<double> lambda_[2];
  std::vector<SpectralZRow<T>> z_rows_;
  T scale_;
  bool singular_ = false;
  bool periodic_z_ = false;
  typename Fftw<T>::plan forward_ = nullptr;
  typename Fftw<T>::plan backward_ = nullptr;
};

}  // namespace

template <class T>
std::unique_ptr<SpectralSolve<T>> make_cpu_spectral_solve(const OperatorView<T>& op, const SpectralLayers<T>& layers) {
  return std::make_unique<CpuSpectralSolve<T>>(op, layers);
}

template std::unique_ptr<SpectralSolve<float>> make_cpu_spectral_solve(const OperatorView<float>&,
                                                                       const SpectralLayers<float>&);
template std::unique_ptr<SpectralSolve<double>> make_cpu_spectral_solve(const OperatorView<double>&,
                                                                        const SpectralLayers<double>&);

}  // namespace adi3d::cpu
