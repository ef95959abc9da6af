// The 7-point operator: exact on quadratics, conservative (telescoping fluxes) with
// variable diffusivity on Neumann and periodic boxes, symmetric in the half-cell inner
// product, and the right Neumann data terms.
#include "dense_reference.hpp"
#include "grid_fixtures.hpp"
#include "solvers/backend.hpp"
#include "solvers/discretization.hpp"
#include "solvers/face_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace adi3d {
namespace {

using test::boundary_mix;
using test::make_diffusion;

template <class T>
class Operator : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Operator, Types);

template <class T>
std::vector<T> apply_everywhere(const OperatorView<T>& op, const std::vector<T>& u) {
  std::vector<T> out(u.size());
  for (int k = 0; k < op.n[2]; ++k)
    for (int j = 0; j < op.n[1]; ++j)
      for (int i = 0; i < op.n[0]; ++i)
        out[i + op.n[0] * (j + op.n[1] * k)] = apply_operator(op, u.data(), i, j, k);
  return out;
}

TYPED_TEST(Operator, ExactOnQuadraticsIncludingNeumannFaces) {
  using T = TypeParam;
  std::mt19937 rng(1);
  const BoundarySpec bc = boundary_mix(BoundaryKind::neumann, BoundaryKind::dirichlet, BoundaryKind::neumann);
  const Diffusion<T> d = make_diffusion<T>({9, 7, 6}, bc, false, rng);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  // u = x^2 + 2 y^2 + 3 z^2: A u = 2 ax + 4 ay + 6 az; zero normal derivative at x = 0 and
  // z = 0, but not at the upper faces, whose ghost rule then adds 2 alpha g / h.
  const Grid3& g = d.grid;
  std::vector<T> u(g.size());
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const double x = g.coord(0, i), y = g.coord(1, j), z = g.coord(2, k);
        u[g.index(i, j, k)] = static_cast<T>(x * x + 2 * y * y + 3 * z * z);
      }
  const double expected = 2 * d.alpha[0] + 4 * d.alpha[1] + 6 * d.alpha[2];
  const std::vector<T> au = apply_everywhere(op, u);
  const double tol = sizeof(T) == 4 ? 2e-2 : 1e-8;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 1; j + 1 < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        double value = au[g.index(i, j, k)];
        // outward derivatives at the upper Neumann faces: du/dx = 2x, du/dz = 6z
        if (i == g.n[0] - 1) value += neumann_term(RowKind::neumann_hi, d.alpha[0], 2 * g.coord(0, i), 1 / g.h[0]);
        if (k == g.n[2] - 1) value += neumann_term(RowKind::neumann_hi, d.alpha[2], 6 * g.coord(2, k), 1 / g.h[2]);
        ASSERT_NEAR(value, expected, tol * expected) << i << "," << j << "," << k;
      }
}

TYPED_TEST(Operator, ConservativeAndSymmetricWithVariableDiffusivity) {
  using T = TypeParam;
  std::mt19937 rng(2);
  for (BoundaryKind kind : {BoundaryKind::neumann, BoundaryKind::periodic}) {
    const Diffusion<T> d = make_diffusion<T>({7, 5, 6}, boundary_mix(kind, kind, kind), true, rng);
    const OperatorView<T> op = make_operator_view(d, d.alpha_field.data());
    const Grid3& g = d.grid;
    const std::vector<T> u = test::random_field<T>(g.size(), rng), v = test::random_field<T>(g.size(), rng);
    const std::vector<T> au = apply_everywhere(op, u), av = apply_everywhere(op, v);
    double total = 0, uav = 0, vau = 0, scale = 0;
    for (int k = 0; k < g.n[2]; ++k)
      for (int j = 0; j < g.n[1]; ++j)
        for (int i = 0; i < g.n[0]; ++i) {
          // half-cell weights on Neumann faces
          double w = 1;
          const int idx[3] = {i, j, k};
          for (int a = 0; a < 3; ++a)
            if (kind == BoundaryKind::neumann && (idx[a] == 0 || idx[a] == g.n[a] - 1)) w *= 0.5;
          const std::size_t p = g.index(i, j, k);
          total += w * au[p];
          uav += w * u[p] * av[p];
          vau += w * v[p] * au[p];
          scale += w * std::fabs(double(au[p]));
        }
    const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
    EXPECT_NEAR(total, 0.0, tol * scale) << "fluxes do not telescope";
    EXPECT_NEAR(uav, vau, tol * scale) << "operator not symmetric";
  }
}

// The face diffusivity 2 a b / (a + b) across T's whole range: exact for a = 3 s, b = 5 s
// in either order (15/4 s) where 2 a b itself is subnormal, zero or infinite in T (float:
// s = 2^+-70, 2^+-120), and within 2 ulp of a wider type's for random pairs spread over
// the range, their ratio within it.
TYPED_TEST(Operator, FaceMeansKeepTheirPrecisionAcrossTheRange) {
  using T = TypeParam;
  const int top = std::numeric_limits<T>::max_exponent - 8;  // float 120, double 1016
  for (int e : {-top, -top / 2 - 10, -top / 4, 0, top / 4, top / 2 + 10, top}) {
    const T s = std::ldexp(T(1), e);
    EXPECT_EQ(harmonic_mean(3 * s, 5 * s), T(3.75) * s) << "s = 2^" << e;
    EXPECT_EQ(harmonic_mean(5 * s, 3 * s), T(3.75) * s) << "s = 2^" << e;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exponent(-top, top), ratio(20 - top, top - 20);
  for (int trial = 0; trial < 2000; ++trial) {
    const double ea = exponent(rng), eb = std::clamp(ea + ratio(rng), double(-top), double(top));
    const T a = static_cast<T>(std::exp2(ea)), b = static_cast<T>(std::exp2(eb));
    const long double la = a, lb = b, exact = 2 * la * lb / (la + lb);
    for (const long double got : {harmonic_mean(a, b), harmonic_mean(b, a)})
      ASSERT_LE(std::fabs(got - exact), 2 * std::numeric_limits<T>::epsilon() * exact) << a << " " << b;
  }
  EXPECT_EQ(harmonic_mean(T(0), T(2)), T(0));
  EXPECT_EQ(harmonic_mean(T(2), T(0)), T(0));
  EXPECT_EQ(harmonic_mean(T(0), T(0)), T(0));
}

TYPED_TEST(Operator, DirichletNodesAreRecognisedOnEveryFace) {
  using T = TypeParam;
  std::mt19937 rng(3);
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::periodic, BoundaryKind::neumann);
  const Diffusion<T> d = make_diffusion<T>({5, 4, 4}, bc, false, rng);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  EXPECT_TRUE(is_dirichlet_node(op, 0, 2, 2));
  EXPECT_TRUE(is_dirichlet_node(op, 4, 0, 0));
  EXPECT_FALSE(is_dirichlet_node(op, 2, 0, 0));
  EXPECT_FALSE(is_dirichlet_node(op, 2, 3, 3));
}

// The CPU backend's right-hand side (with its constant-alpha fast path) against the point
// rules applied node by node.
TYPED_TEST(Operator, BackendRightHandSideMatchesPointRules) {
  using T = TypeParam;
  std::mt19937 rng(4);
  auto backend = make_cpu_backend<T>();
  const BoundaryKind kinds[3] = {BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::periodic};
  for (BoundaryKind kx : kinds)
    for (BoundaryKind kz : kinds)
      for (bool variable : {false, true}) {
        const Diffusion<T> d = make_diffusion<T>({13, 6, 7}, boundary_mix(kx, BoundaryKind::neumann, kz), variable, rng);
        const Grid3& g = d.grid;
        const OperatorView<T> op = make_operator_view(d, variable ? d.alpha_field.data() : nullptr);
        const std::vector<T> u = test::random_field<T>(g.size(), rng), f = test::random_field<T>(g.size(), rng);
        std::array<std::vector<T>, 6> faces;
        FaceData<T> neumann{};
        for (int face = 0; face < 6; ++face)
          if (d.bc.face[face] == BoundaryKind::neumann) {
            faces[face] = test::random_field<T>(face_size(g, face), rng);
            neumann[face] = faces[face].data();
          }
        std::vector<T> r(g.size());
        const T scale = T(0.3);
        backend->operator_rhs(op, u.data(), f.data(), neumann, scale, r.data());
        for (int k = 0; k < g.n[2]; ++k)
          for (int j = 0; j < g.n[1]; ++j)
            for (int i = 0; i < g.n[0]; ++i) {
              const std::size_t p = g.index(i, j, k);
              double expected = 0;
              if (!is_dirichlet_node(op, i, j, k)) {
                expected = double(apply_operator(op, u.data(), i, j, k)) + f[p];
                const int idx[3] = {i, j, k};
                for (int a = 0; a < 3; ++a) {
                  const RowKind kind = row_kind(idx[a], g.n[a], op.lo[a], op.hi[a]);
                  if (kind != RowKind::neumann_lo && kind != RowKind::neumann_hi) continue;
                  const int face = 2 * a + (kind == RowKind::neumann_hi);
                  const FaceAxes fa = face_axes(face);
                  const T gval = faces[face][idx[fa.u] + g.n[fa.u] * idx[fa.v]];
                  expected += neumann_term(kind, alpha_at(op, a, p), gval, op.inv_h[a]);
                }
                expected *= double(scale);
              }
              ASSERT_NEAR(double(r[p]), expected, (sizeof(T) == 4 ? 1e-4 : 1e-10) * (1 + std::fabs(expected)))
                  << i << "," << j << "," << k;
            }
      }
}

// fold_neumann_terms, the stepper's fold of Neumann data into the source: on the unknown
// nodes of the Neumann faces with data it gives operator_rhs at u = 0 with that source to
// the bit (a zero source where base is null; base may be f itself), edges and corners of
// two such faces included, and leaves every other node as it was (y+ is Neumann without
// data). Faces of every kind, constant and variable alpha.
TYPED_TEST(Operator, FoldedNeumannTermsAreTheRightHandSideAtZero) {
  using T = TypeParam;
  std::mt19937 rng(5);
  auto backend = make_cpu_backend<T>();
  const BoundaryKind kinds[3] = {BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::periodic};
  for (BoundaryKind kx : kinds)
    for (BoundaryKind kz : kinds)
      for (bool variable : {false, true})
        for (int base_kind = 0; base_kind < 3; ++base_kind) {  // a source apart, in place, none
          const Diffusion<T> d =
              make_diffusion<T>({11, 6, 7}, boundary_mix(kx, BoundaryKind::neumann, kz), variable, rng);
          const Grid3& g = d.grid;
          const OperatorView<T> op = make_operator_view(d, variable ? d.alpha_field.data() : nullptr);
          std::array<std::vector<T>, 6> faces;
          FaceData<T> neumann{};
          for (int face = 0; face < 6; ++face)
            if (d.bc.face[face] == BoundaryKind::neumann && face != 3) {  // y+: insulated, no data
              faces[face] = test::random_field<T>(face_size(g, face), rng);
              neumann[face] = faces[face].data();
            }
          const std::vector<T> source = test::random_field<T>(g.size(), rng);
          const std::vector<T> zero(g.size(), T(0));
          std::vector<T> expected(g.size());
          backend->operator_rhs(op, zero.data(), base_kind == 2 ? nullptr : source.data(), neumann, T(1),
                                expected.data());
          std::vector<T> folded = base_kind == 1 ? source : test::random_field<T>(g.size(), rng);
          const std::vector<T> before = folded;
          const T* base = base_kind == 0 ? source.data() : base_kind == 1 ? folded.data() : nullptr;
          backend->fold_neumann_terms(op, neumann, base, folded.data());
          for (int k = 0; k < g.n[2]; ++k)
            for (int j = 0; j < g.n[1]; ++j)
              for (int i = 0; i < g.n[0]; ++i) {
                const std::size_t p = g.index(i, j, k);
                if (test::folds_neumann_node(op, neumann, i, j, k))
                  ASSERT_EQ(folded[p], expected[p]) << i << "," << j << "," << k << " base kind " << base_kind;
                else
                  ASSERT_EQ(folded[p], before[p]) << i << "," << j << "," << k << " base kind " << base_kind;
              }
        }
}

// A Robin face's flux as Neumann data: operator_rhs with robin_data's g adds
// 2 h (u_inf - u) / h_grid at each node of the face (every face Robin: edges and corners
// take one term per face), h constant or a field, alpha constant or a field.
TYPED_TEST(Operator, RobinDataAddsTheConvectiveFlux) {
  using T = TypeParam;
  std::mt19937 rng(9);
  auto backend = make_cpu_backend<T>();
  for (bool variable : {false, true}) {
    const Diffusion<T> d = make_diffusion<T>(
        {7, 6, 5}, boundary_mix(BoundaryKind::robin, BoundaryKind::robin, BoundaryKind::robin), variable, rng);
    const Grid3& g = d.grid;
    OperatorView<T> op = make_operator_view(d, variable ? d.alpha_field.data() : nullptr);
    std::array<std::vector<T>, 6> h, ambient, data;
    FaceData<T> neumann{};
    for (int f = 0; f < 6; ++f) {
      h[f] = test::random_field<T>(face_size(g, f), rng, 0.0, 5.0);
      if (f % 2) {
        op.robin_h_field[f] = h[f].data();
      } else {  // one value over the face
        std::fill(h[f].begin(), h[f].end(), h[f][0]);
        op.robin_h[f] = h[f][0];
      }
      ambient[f] = test::random_field<T>(face_size(g, f), rng);
    }
    const std::vector<T> u = test::random_field<T>(g.size(), rng);
    for (int f = 0; f < 6; ++f) {
      data[f].resize(face_size(g, f));
      backend->robin_data(op, f, ambient[f].data(), u.data(), data[f].data());
      neumann[f] = data[f].data();
    }
    std::vector<T> with(g.size()), without(g.size());
    backend->operator_rhs(op, u.data(), nullptr, neumann, T(1), with.data());
    backend->operator_rhs(op, u.data(), nullptr, FaceData<T>{}, T(1), without.data());
    for (int k = 0; k < g.n[2]; ++k)
      for (int j = 0; j < g.n[1]; ++j)
        for (int i = 0; i < g.n[0]; ++i) {
          const std::size_t p = g.index(i, j, k);
          double flux = 0, scale = std::fabs(double(without[p]));
          for (int f = 0; f < 6; ++f) {
            if (!on_face(op.n, f, i, j, k)) continue;
            const FaceAxes fa = face_axes(f);
            const int idx[3] = {i, j, k};
            const std::size_t e = idx[fa.u] + static_cast<std::size_t>(g.n[fa.u]) * idx[fa.v];
            const double term = 2 * double(h[f][e]) * (double(ambient[f][e]) - double(u[p])) / g.h[f / 2];
            flux += term;
            scale += std::fabs(term);
          }
          ASSERT_NEAR(double(with[p]) - double(without[p]), flux, 8 * test::tolerance<T>() * (1 + scale))
              << i << "," << j << "," << k << " variable " << variable;
        }
  }
}

}  // namespace
}  // namespace adi3d
