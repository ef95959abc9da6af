#include "physics/grid_functions.hpp"

#include "solvers/face_layout.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace adi3d::physics {
namespace {

// The lowest flat index with a non-finite value over the threads of one sampling (a
// deterministic node to name, whatever the schedule).
class FirstNonFinite {
 public:
  void offer(std::size_t index) {
#pragma omp critical(adi3d_first_non_finite)
    if (index < first_) first_ = index;
  }
  bool found() const { return first_ != kNone; }
  std::size_t index() const { return first_; }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::size_t first_ = kNone;
};

}  // namespace

template <class T>
std::optional<NonFiniteNode> sample_grid(const Formula& f, const Grid3& g, double t, T* out) {
  const int nx = g.n[0], ny = g.n[1], nz = g.n[2];
  std::vector<double> x(nx);
  for (int i = 0; i < nx; ++i) x[i] = g.coord(0, i);
  FirstNonFinite bad;
#pragma omp parallel
  {
    std::vector<double> row(nx);
#pragma omp for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j) {
        f.eval_row(x.data(), nx, g.coord(1, j), g.coord(2, k), t, row.data());
        T* dst = out + g.index(0, j, k);
        bool finite = true;
        for (int i = 0; i < nx; ++i) {
          dst[i] = static_cast<T>(row[i]);
          finite = finite && std::isfinite(dst[i]);
        }
        if (finite) continue;
        for (int i = 0; i < nx; ++i)
          if (!std::isfinite(dst[i])) {
            bad.offer(g.index(i, j, k));
            break;
          }
      }
  }
  if (!bad.found()) return std::nullopt;
  const std::size_t p = bad.index(), plane = static_cast<std::size_t>(nx) * ny;
  const int i = static_cast<int>(p % nx), j = static_cast<int>(p / nx % ny), k = static_cast<int>(p / plane);
  return NonFiniteNode{g.coord(0, i), g.coord(1, j), g.coord(2, k), static_cast<double>(out[p])};
}

NonFiniteNode face_entry_node(const Grid3& g, int face, std::size_t entry, double value) {
  const FaceAxes fa = face_axes(face);
  const std::size_t nu = static_cast<std::size_t>(g.n[fa.u]);
  double p[3];
  p[fa.axis] = g.coord(fa.axis, face % 2 == 0 ? 0 : g.n[fa.axis] - 1);
  p[fa.u] = g.coord(fa.u, static_cast<int>(entry % nu));
  p[fa.v] = g.coord(fa.v, static_cast<int>(entry / nu));
  return {p[0], p[1], p[2], value};
}

template <class T>
std::optional<NonFiniteNode> sample_face(const Formula& f, const Grid3& g, int face, double t, T* out) {
  const FaceAxes fa = face_axes(face);
  const int nu = g.n[fa.u], nv = g.n[fa.v];
  const double normal = g.coord(fa.axis, face % 2 == 0 ? 0 : g.n[fa.axis] - 1);
  FirstNonFinite bad;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b) {
    for (int a = 0; a < nu; ++a) {
      double p[3];
      p[fa.axis] = normal;
      p[fa.u] = g.coord(fa.u, a);
      p[fa.v] = g.coord(fa.v, b);
      const std::size_t entry = a + static_cast<std::size_t>(nu) * b;
      out[entry] = static_cast<T>(f(p[0], p[1], p[2], t));
      if (!std::isfinite(out[entry])) bad.offer(entry);
    }
  }
  if (!bad.found()) return std::nullopt;
  return face_entry_node(g, face, bad.index(), static_cast<double>(out[bad.index()]));
}

template std::optional<NonFiniteNode> sample_grid(const Formula&, const Grid3&, double, float*);
template std::optional<NonFiniteNode> sample_grid(const Formula&, const Grid3&, double, double*);
template std::optional<NonFiniteNode> sample_face(const Formula&, const Grid3&, int, double, float*);
template std::optional<NonFiniteNode> sample_face(const Formula&, const Grid3&, int, double, double*);

}  // namespace adi3d::physics
