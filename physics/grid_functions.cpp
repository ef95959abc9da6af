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

// f on nz planes of g's x-y nodes, plane k at z[k] (x fastest); with minuend,
// out = minuend - f in double, rounded once to T. The node reported is f's first value (lowest
// index) that is not finite in T.
template <class T>
std::optional<NonFiniteNode> sample_planes(const Formula& f, const Grid3& g, const std::vector<double>& z, double t,
                                           T* out, const T* minuend) {
  const int nx = g.n[0], ny = g.n[1], nz = static_cast<int>(z.size());
  std::vector<double> x(nx);
  for (int i = 0; i < nx; ++i) x[i] = g.coord(0, i);
  FirstNonFinite bad;
#pragma omp parallel
  {
    std::vector<double> row(nx);
#pragma omp for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j) {
        f.eval_row(x.data(), nx, g.coord(1, j), z[k], t, row.data());
        const std::size_t first = g.index(0, j, k);
        T* dst = out + first;
        bool finite = true;
        for (int i = 0; i < nx; ++i) {
          const T v = static_cast<T>(row[i]);
          finite = finite && std::isfinite(v);
          dst[i] = minuend ? static_cast<T>(static_cast<double>(minuend[first + i]) - row[i]) : v;
        }
        if (finite) continue;
        for (int i = 0; i < nx; ++i)
          if (!std::isfinite(static_cast<T>(row[i]))) {
            bad.offer(first + i);
            break;
          }
      }
  }
  if (!bad.found()) return std::nullopt;
  const std::size_t p = bad.index(), plane = static_cast<std::size_t>(nx) * ny;
  const int i = static_cast<int>(p % nx), j = static_cast<int>(p / nx % ny), k = static_cast<int>(p / plane);
  const double at[3] = {g.coord(0, i), g.coord(1, j), z[k]};
  return NonFiniteNode{at[0], at[1], at[2], static_cast<double>(static_cast<T>(f(at[0], at[1], at[2], t)))};
}

}  // namespace

template <class T>
std::optional<NonFiniteNode> sample_grid(const Formula& f, const Grid3& g, double t, T* out) {
  std::vector<double> z(g.n[2]);
  for (int k = 0; k < g.n[2]; ++k) z[k] = g.coord(2, k);
  return sample_planes(f, g, z, t, out, static_cast<const T*>(nullptr));
}

template <class T>
std::optional<NonFiniteNode> sample_slab(const Formula& f, const SlabDecomposition& slab, double t, T* out,
                                         const T* minuend) {
  std::vector<double> z(slab.local.n[2]);
  for (int k = 0; k < slab.local.n[2]; ++k) z[k] = slab.whole.coord(2, slab.whole_plane(k));
  return sample_planes(f, slab.local, z, t, out, minuend);
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
template std::optional<NonFiniteNode> sample_slab(const Formula&, const SlabDecomposition&, double, float*,
                                                  const float*);
template std::optional<NonFiniteNode> sample_slab(const Formula&, const SlabDecomposition&, double, double*,
                                                  const double*);
template std::optional<NonFiniteNode> sample_face(const Formula&, const Grid3&, int, double, float*);
template std::optional<NonFiniteNode> sample_face(const Formula&, const Grid3&, int, double, double*);

}  // namespace adi3d::physics
