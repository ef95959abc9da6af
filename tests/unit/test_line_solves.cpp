// CPU line solves along each axis against dense elimination of independently assembled
// line systems (I - tau A_axis), on odd sizes, every boundary kind and variable alpha.
#include "dense_reference.hpp"
#include "grid_fixtures.hpp"
#include "solvers/backend.hpp"

#include <gtest/gtest.h>

namespace adi3d {
namespace {

// Written from the discretisation's definition, not from discretization.hpp.
// robin_h(face): a Robin face's h at the line's end node on that face (0: none).
template <class T, class RobinH>
std::vector<double> reference_line(const Diffusion<T>& d, int axis, double tau, std::array<int, 3> at,
                                   const std::vector<T>& rhs, RobinH robin_h) {
  const Grid3& g = d.grid;
  const int n = g.n[axis];
  const BoundaryKind lo = d.bc.lo(axis), hi = d.bc.hi(axis);
  auto alpha = [&](int i) {
    std::array<int, 3> p = at;
    p[axis] = (i + n) % n;
    return d.alpha_field.empty() ? d.alpha[axis] : double(d.alpha_field[g.index(p[0], p[1], p[2])]);
  };
  auto face = [&](int i, int j) { return 2 * alpha(i) * alpha(j) / (alpha(i) + alpha(j)); };
  const double ih2 = 1 / (g.h[axis] * g.h[axis]);
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
  std::vector<double> b(n);
  for (int i = 0; i < n; ++i) {
    std::array<int, 3> p = at;
    p[axis] = i;
    b[i] = rhs[g.index(p[0], p[1], p[2])];
    m[i][i] = 1;
    const bool first = i == 0, last = i == n - 1;
    if (lo == BoundaryKind::periodic) {
      m[i][(i + n - 1) % n] -= tau * face(i - 1, i) * ih2;
      m[i][(i + 1) % n] -= tau * face(i, i + 1) * ih2;
      m[i][i] += tau * (face(i - 1, i) + face(i, i + 1)) * ih2;
    } else if ((first && lo == BoundaryKind::dirichlet) || (last && hi == BoundaryKind::dirichlet)) {
      // identity row
    } else if (first) {
      // A Robin face's flux h (u_inf - u) over the half cell h_grid / 2.
      m[i][1] -= 2 * tau * face(0, 1) * ih2;
      m[i][i] += 2 * tau * face(0, 1) * ih2 + tau * 2 * robin_h(2 * axis) / g.h[axis];
    } else if (last) {
      m[i][n - 2] -= 2 * tau * face(n - 2, n - 1) * ih2;
      m[i][i] += 2 * tau * face(n - 2, n - 1) * ih2 + tau * 2 * robin_h(2 * axis + 1) / g.h[axis];
    } else {
      m[i][i - 1] -= tau * face(i - 1, i) * ih2;
      m[i][i + 1] -= tau * face(i, i + 1) * ih2;
      m[i][i] += tau * (face(i - 1, i) + face(i, i + 1)) * ih2;
    }
  }
  return test::dense_solve(m, b);
}

template <class T>
class LineSolves : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LineSolves, Types);

TYPED_TEST(LineSolves, EveryAxisEveryBoundaryKindMatchesDenseReference) {
  using T = TypeParam;
  std::mt19937 rng(5);
  auto backend = make_cpu_backend<T>();
  const BoundaryKind kinds[3] = {BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::periodic};
  const std::array<std::array<int, 3>, 3> shapes = {{{67, 35, 19}, {3, 4, 5}, {40, 3, 33}}};
  for (const auto& shape : shapes)
    for (BoundaryKind kind : kinds)
      for (bool variable : {false, true}) {
        BoundarySpec bc = test::boundary_mix(kind, kind, kind);
        if (kind == BoundaryKind::neumann) bc.face[1] = bc.face[2] = BoundaryKind::dirichlet;  // mixed faces
        const Diffusion<T> d = test::make_diffusion<T>(shape, bc, variable, rng);
        Array<T> alpha;
        if (variable) {
          alpha = backend->allocate(d.grid.size());
          backend->upload(d.alpha_field.data(), alpha.data(), d.grid.size());
        }
        const OperatorView<T> op = make_operator_view(d, variable ? alpha.data() : nullptr);
        const double tau = 0.37 * d.grid.h[0];
        for (int axis = 0; axis < 3; ++axis) {
          const std::vector<T> rhs = test::random_field<T>(d.grid.size(), rng);
          std::vector<T> x = rhs;
          backend->solve_lines(op, axis, static_cast<T>(tau), x.data());
          // every line of a few planes, and the corners of the grid
          for (int v : {0, 1, shape[axis == 2 ? 1 : 2] - 1}) {
            const int along_u = shape[axis == 0 ? 1 : 0];
            for (int u = 0; u < along_u; ++u) {
              std::array<int, 3> at{};
              at[axis == 0 ? 1 : 0] = u;
              at[axis == 2 ? 1 : 2] = v;
              const std::vector<double> ref = reference_line(d, axis, tau, at, rhs, [](int) { return 0.0; });
              for (int i = 0; i < shape[axis]; ++i) {
                std::array<int, 3> p = at;
                p[axis] = i;
                ASSERT_NEAR(double(x[d.grid.index(p[0], p[1], p[2])]), ref[i], 20 * test::tolerance<T>())
                    << "axis " << axis << " kind " << int(kind) << " variable " << variable << " row " << i;
              }
            }
          }
        }
      }
}

// Robin faces on every axis: a constant h on the lower faces (the shared factors take it),
// an h field on the upper ones (each line its own end row), alpha constant or a field.
TYPED_TEST(LineSolves, RobinFacesMatchDenseReference) {
  using T = TypeParam;
  std::mt19937 rng(11);
  auto backend = make_cpu_backend<T>();
  const std::array<int, 3> shape{13, 9, 11};
  for (bool variable : {false, true}) {
    BoundarySpec bc = test::boundary_mix(BoundaryKind::robin, BoundaryKind::robin, BoundaryKind::robin);
    const Diffusion<T> d = test::make_diffusion<T>(shape, bc, variable, rng);
    Array<T> alpha;
    if (variable) {
      alpha = backend->allocate(d.grid.size());
      backend->upload(d.alpha_field.data(), alpha.data(), d.grid.size());
    }
    OperatorView<T> op = make_operator_view(d, variable ? alpha.data() : nullptr);
    std::array<std::vector<T>, 6> fields;
    for (int f = 0; f < 6; ++f) {
      if (f % 2 == 0) {
        op.robin_h[f] = static_cast<T>(0.5 + f);
        continue;
      }
      fields[f] = test::random_field<T>(face_size(d.grid, f), rng, 0.0, 40.0);
      op.robin_h_field[f] = fields[f].data();
    }
    const double tau = 0.37 * d.grid.h[0];
    for (int axis = 0; axis < 3; ++axis) {
      const std::vector<T> rhs = test::random_field<T>(d.grid.size(), rng);
      std::vector<T> x = rhs;
      backend->solve_lines(op, axis, static_cast<T>(tau), x.data());
      const int ua = axis == 0 ? 1 : 0, va = axis == 2 ? 1 : 2;
      for (int v = 0; v < shape[va]; ++v)
        for (int u = 0; u < shape[ua]; ++u) {
          std::array<int, 3> at{};
          at[ua] = u;
          at[va] = v;
          auto robin_h = [&](int face) {
            return face % 2 == 0 ? double(op.robin_h[face]) : double(fields[face][u + shape[ua] * v]);
          };
          const std::vector<double> ref = reference_line(d, axis, tau, at, rhs, robin_h);
          for (int i = 0; i < shape[axis]; ++i) {
            std::array<int, 3> p = at;
            p[axis] = i;
            ASSERT_NEAR(double(x[d.grid.index(p[0], p[1], p[2])]), ref[i], 20 * test::tolerance<T>())
                << "axis " << axis << " variable " << variable << " line (" << u << ", " << v << ") row " << i;
          }
        }
    }
  }
}

}  // namespace
}  // namespace adi3d
