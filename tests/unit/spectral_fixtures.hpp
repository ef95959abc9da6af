#pragma once
// Random Poisson data for the direct and Krylov solves' tests (CPU and GPU): a source and
// face data drawn at random, and for singular problems (no Dirichlet face) a source offset
// that makes the data compatible up to a small part the solvers' compatibility shift must
// remove; a solve's report and field, and the differences of two fields.
#include "solvers/douglas_step.hpp"
#include "solvers/poisson_adi.hpp"
#include "solvers/face_layout.hpp"
#include "tests/unit/grid_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

namespace adi3d::test {

template <class T>
class RandomPoissonData final : public Forcing<T> {
 public:
  RandomPoissonData(const Grid3& g, unsigned seed) : g_(g) {
    std::mt19937 rng(seed);
    source_ = random_field<double>(g.size(), rng);
    for (int f = 0; f < 6; ++f) faces_[f] = random_field<double>(face_size(g, f), rng);
  }
  void set_offset(double offset) { offset_ = offset; }
  // One h over a Robin face (boundary() then gives its u_inf).
  void set_robin_h(int face, double h) { robin_h_[face] = h; }
  std::optional<double> robin_h_constant(int face) const override { return robin_h_[face]; }
  bool has_source() const override { return true; }
  bool source_depends_on_time() const override { return false; }
  void source(double, T* v) const override {
    for (std::size_t p = 0; p < source_.size(); ++p) v[p] = static_cast<T>(source_[p] - offset_);
  }
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int) const override { return false; }
  void boundary(int face, double, T* v) const override {
    for (std::size_t e = 0; e < faces_[face].size(); ++e) v[e] = static_cast<T>(faces_[face][e]);
  }

 private:
  Grid3 g_;
  std::vector<double> source_;
  std::vector<double> faces_[6];
  double robin_h_[6] = {0, 0, 0, 0, 0, 0};
  double offset_ = 0;
};

// A node's half-cell weight: 1/2 per axis on which it lies on a non-periodic face.
template <class T>
double half_cell_weight(const Diffusion<T>& d, int i, int j, int k) {
  double w = 1;
  const int idx[3] = {i, j, k};
  for (int a = 0; a < 3; ++a)
    if (!d.bc.periodic(a) && (idx[a] == 0 || idx[a] == d.grid.n[a] - 1)) w *= 0.5;
  return w;
}

// The half-cell weighted mean of f + the Neumann terms (the residual of u = 0) and of its
// magnitude, as the compatibility check weighs them.
template <class T>
std::pair<double, double> weighted_data_mean(Backend<T>& backend, const Diffusion<T>& d, const Forcing<T>& data) {
  const Grid3& g = d.grid;
  DouglasStepper<T> probe(backend, d, data, 1.0);
  Array<T> u = backend.allocate(g.size()), r = backend.allocate(g.size());
  backend.fill(u.data(), T(0), g.size());
  probe.initialize(u.data(), 0.0);
  probe.residual(u.data(), 0.0, r.data());
  std::vector<T> host(g.size());
  backend.download(r.data(), host.data(), g.size());
  double sum = 0, sum_abs = 0, weights = 0;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const double w = half_cell_weight(d, i, j, k);
        const double v = host[g.index(i, j, k)];
        sum += w * v;
        sum_abs += w * std::fabs(v);
        weights += w;
      }
  return {sum / weights, sum_abs / weights};
}

// For a singular problem: an offset of the source that leaves a weighted mean of `left`
// times the data's scale for the solver's shift to remove.
template <class T>
void make_nearly_compatible(Backend<T>& backend, const Diffusion<T>& d, RandomPoissonData<T>& data, double left) {
  data.set_offset(0);
  const auto [mean, scale] = weighted_data_mean(backend, d, data);
  data.set_offset(mean - left * scale);
}

template <class T>
struct Solved {
  PoissonReport report;
  std::vector<T> u;
};

template <class T, class Solver>
Solved<T> run(Backend<T>& backend, const Diffusion<T>& d, Solver&& solve) {
  Array<T> u = backend.allocate(d.grid.size());
  backend.fill(u.data(), T(0), d.grid.size());
  Solved<T> out;
  out.report = solve(u.data());
  out.u.resize(d.grid.size());
  backend.download(u.data(), out.u.data(), d.grid.size());
  return out;
}

template <class T>
double max_abs(const std::vector<T>& v) {
  double m = 0;
  for (T x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
  return m;
}

// The largest |a - b| over the nodes.
inline double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0;
  for (std::size_t p = 0; p < a.size(); ++p) diff = std::max(diff, std::fabs(a[p] - b[p]));
  return diff;
}

// The ADI iteration's solution to `tol`, from u = 0: the reference the other Poisson solvers
// are held to.
template <class T>
Solved<T> adi_solution(Backend<T>& backend, const Diffusion<T>& d, const Forcing<T>& data, double tol,
                       long max_iter = 20000) {
  PoissonAdi<T> adi(backend, d, data, {tol, max_iter, 0});
  return run<T>(backend, d, [&](T* u) { return adi.solve(u); });
}

}  // namespace adi3d::test
