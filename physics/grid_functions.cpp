#include "physics/grid_functions.hpp"

#include "solvers/face_layout.hpp"

#include <vector>

namespace adi3d::physics {

template <class T>
void sample_grid(const Formula& f, const Grid3& g, double t, T* out) {
  const int nx = g.n[0], ny = g.n[1], nz = g.n[2];
  std::vector<double> x(nx);
  for (int i = 0; i < nx; ++i) x[i] = g.coord(0, i);
#pragma omp parallel
  {
    std::vector<double> row(nx);
#pragma omp for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j) {
        f.eval_row(x.data(), nx, g.coord(1, j), g.coord(2, k), t, row.data());
        T* dst = out + g.index(0, j, k);
        for (int i = 0; i < nx; ++i) dst[i] = static_cast<T>(row[i]);
      }
  }
}

template <class T>
void sample_face(const Formula& f, const Grid3& g, int face, double t, T* out) {
  const FaceAxes fa = face_axes(face);
  const int nu = g.n[fa.u], nv = g.n[fa.v];
  const double normal = g.coord(fa.axis, face % 2 == 0 ? 0 : g.n[fa.axis] - 1);
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b) {
    for (int a = 0; a < nu; ++a) {
      double p[3];
      p[fa.axis] = normal;
      p[fa.u] = g.coord(fa.u, a);
      p[fa.v] = g.coord(fa.v, b);
      out[a + static_cast<std::size_t>(nu) * b] = static_cast<T>(f(p[0], p[1], p[2], t));
    }
  }
}

template void sample_grid(const Formula&, const Grid3&, double, float*);
template void sample_grid(const Formula&, const Grid3&, double, double*);
template void sample_face(const Formula&, const Grid3&, int, double, float*);
template void sample_face(const Formula&, const Grid3&, int, double, double*);

}  // namespace adi3d::physics
