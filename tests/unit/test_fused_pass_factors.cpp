// The host half of the fused step and of the y/z tile line solve
// (solvers/cuda/fused_step/fused_pass_factors.hpp: chunk_cap, pass_factors, tile_line_factors),
// checked without a GPU: with their factors, a lane-by-lane model of the kernels' warp
// solve (fused_step_kernels.cuh, warp_solve) and of the tile solve's row preparation (a
// Neumann end row halved, then a Dirichlet end value moved into the first or last row)
// must solve a line as the CPU backend does, for every end combination and chunk
// capacity, lines of two nodes too (no interior row; one unknown between a Dirichlet and a
// Neumann end), and cyclic lines with their Sherman-Morrison correction.
#include "grid_fixtures.hpp"
#include "solvers/backend.hpp"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace adi3d {
namespace {

// warp_solve for 32 lanes of C rows each: v holds the rows (lane p: [p C, p C + C)).
// Each shuffle step reads the values of the step before, as the hardware does.
template <class T>
void model_warp_solve(std::vector<T>& v, const std::vector<T>& fac, int C, T s) {
  const T* al = fac.data();
  const T* gf = al + 32 * C;
  const T* gb = gf + 32 * C;
  std::vector<T> y(32, T(0)), A(32), x(32, T(0)), carry(32);
  for (int p = 0; p < 32; ++p) {
    for (int q = 0; q < C; ++q) {
      const T a = al[p * C + q];
      y[p] = std::fma(s * a, y[p], a * v[p * C + q]);
      v[p * C + q] = y[p];
    }
    A[p] = gf[p * C + C - 1];
  }
  for (int d = 1; d < 32; d *= 2) {
    const std::vector<T> A0 = A, y0 = y;
    for (int p = d; p < 32; ++p) {
      y[p] = std::fma(A0[p], y0[p - d], y0[p]);
      A[p] = A0[p] * A0[p - d];
    }
  }
  for (int p = 0; p < 32; ++p) carry[p] = p == 0 ? T(0) : y[p - 1];
  for (int p = 0; p < 32; ++p) {
    for (int q = C - 1; q >= 0; --q) {
      const T yq = std::fma(gf[p * C + q], carry[p], v[p * C + q]);
      x[p] = std::fma(s * al[p * C + q], x[p], yq);
      v[p * C + q] = x[p];
    }
    A[p] = gb[p * C];
  }
  for (int d = 1; d < 32; d *= 2) {
    const std::vector<T> A0 = A, x0 = x;
    for (int p = 0; p + d < 32; ++p) {
      x[p] = std::fma(A0[p], x0[p + d], x0[p]);
      A[p] = A0[p] * A0[p + d];
    }
  }
  for (int p = 0; p < 32; ++p) carry[p] = p == 31 ? T(0) : x[p + 1];
  for (int p = 0; p < 32; ++p)
    for (int q = 0; q < C; ++q) v[p * C + q] = std::fma(gb[p * C + q], carry[p], v[p * C + q]);
}

// A model solve's tolerance against the CPU's, relative to the line's largest value.
template <class T>
constexpr double kLineTolerance = sizeof(T) == 4 ? 5e-5 : 1e-11;
// The largest |got(r) - want(r)| over rows r of [r0, r1), and the largest |want(r)|.
struct LineError {
  double err = 0, scale = 0;
};
template <class Got, class Want>
LineError line_error(int r0, int r1, Got got, Want want) {
  LineError e;
  for (int r = r0; r < r1; ++r) {
    e.err = std::max(e.err, std::fabs(double(got(r)) - double(want(r))));
    e.scale = std::max(e.scale, std::fabs(double(want(r))));
  }
  return e;
}

template <class T>
class FusedPassFactors : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FusedPassFactors, Precisions);

// y lines of a 3 x m x 3 grid with faces bc, at tau = scale h^2: random data (with zero
// values on Dirichlet y faces where zero_dirichlet_ends, as du has there) and the CPU
// backend's solve of it; at(f, j): node j of the line checked, (i, k) = (1, 1).
template <class T>
struct YLines {
  Diffusion<T> d;
  T tau;
  std::vector<T> rhs, want;
  T at(const std::vector<T>& f, int j) const { return f[d.grid.index(1, j, 1)]; }
  OperatorView<T> op() const { return make_operator_view(d, nullptr); }
};
template <class T>
YLines<T> y_lines(const BoundarySpec& bc, int m, double scale, std::mt19937& rng, bool zero_dirichlet_ends = false) {
  YLines<T> l{test::make_diffusion<T>({3, m, 3}, bc, false, rng), T(0), {}, {}};
  const OperatorView<T> op = l.op();
  l.tau = static_cast<T>(scale / op.inv_h2[1]);
  l.rhs = test::random_field<T>(l.d.grid.size(), rng);
  if (zero_dirichlet_ends)
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 3; ++i) l.rhs[l.d.grid.index(i, 0, k)] = l.rhs[l.d.grid.index(i, m - 1, k)] = T(0);
  l.want = l.rhs;
  make_cpu_backend<T>()->solve_lines(op, 1, l.tau, l.want.data());
  return l;
}
// Between Dirichlet faces, zero on the y faces.
template <class T>
YLines<T> dirichlet_lines(int m, double scale, std::mt19937& rng) {
  using B = BoundaryKind;
  return y_lines<T>(test::boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet), m, scale, rng, true);
}

TYPED_TEST(FusedPassFactors, ModelWarpSolveMatchesCpuLineSolve) {
  using T = TypeParam;
  using B = BoundaryKind;
  std::mt19937 rng(11);
  const double tol = kLineTolerance<T>;
  for (const B lo : {B::dirichlet, B::neumann})
    for (const B hi : {B::dirichlet, B::neumann})
      for (const int m : {2, 3, 4, 5, 40, 99, 100, 545, 640, 802, 1056})
        for (const double scale : {0.3, 4.0, 50.0}) {
          BoundarySpec bc = test::boundary_mix(B::dirichlet, B::dirichlet, B::dirichlet);
          bc.face[2] = lo;
          bc.face[3] = hi;
          const YLines<T> l = y_lines<T>(bc, m, scale, rng);

          // The kernel's way: unknowns first..last, rows prepared as in yz_pass_kernel.
          const int first = lo == B::dirichlet ? 1 : 0, last = hi == B::dirichlet ? m - 2 : m - 1;
          const int R = last - first + 1;
          if (R < 1) continue;  // every node a Dirichlet node
          const int cap = cuda::fused::chunk_cap(R + 2);
          ASSERT_NE(cap, 0) << m;
          std::vector<T> fac(3 * 32 * static_cast<std::size_t>(cap), T(0));
          const T s = cuda::fused::tile_line_factors(l.op(), 1, l.tau, first, last, cap, fac.data());
          std::vector<T> v(32 * static_cast<std::size_t>(cap), T(0));
          for (int r = 0; r < R; ++r) v[r] = l.at(l.rhs, first + r);
          if (first == 0) v[0] *= T(0.5);
          if (last == m - 1) v[R - 1] *= T(0.5);
          if (first == 1) v[0] += s * l.at(l.rhs, 0);
          if (last == m - 2) v[R - 1] += s * l.at(l.rhs, m - 1);
          model_warp_solve(v, fac, cap, s);

          const LineError e =
              line_error(0, R, [&](int r) { return v[r]; }, [&](int r) { return l.at(l.want, first + r); });
          EXPECT_LE(e.err, tol * e.scale) << "ends " << int(lo) << int(hi) << " n " << m << " tau scale " << scale;
          // Padding rows solve to 0 from the zero data behind the line.
          for (std::size_t r = R; r < v.size(); ++r) ASSERT_EQ(v[r], T(0)) << "padding row " << r;
        }
}

// The model warp solve of the cyclic y lines l (of m = l's line length nodes) with the
// factors fac and s of the modified matrix, then x = y - c z on the z_rows rows z holds
// (m, or 32 cap where z is padded, as the fused x pass corrects its padding rows too):
// the CPU backend's cyclic solve, and the padding rows left at 0.
template <class T>
void expect_model_cyclic_solve(const YLines<T>& l, int cap, const std::vector<T>& fac, T s, T corner_ratio,
                               T inv_denominator, const T* z, int z_rows, double scale) {
  const int m = l.d.grid.n[1];
  std::vector<T> v(32 * static_cast<std::size_t>(cap), T(0));
  for (int r = 0; r < m; ++r) v[r] = l.at(l.rhs, r);
  model_warp_solve(v, fac, cap, s);
  const T k = (v[0] + corner_ratio * v[m - 1]) * inv_denominator;
  for (int r = 0; r < z_rows; ++r) v[r] = std::fma(-k, z[r], v[r]);
  const LineError e = line_error(0, m, [&](int r) { return v[r]; }, [&](int r) { return l.at(l.want, r); });
  EXPECT_LE(e.err, kLineTolerance<T> * e.scale) << "n " << m << " tau scale " << scale;
  for (std::size_t r = m; r < v.size(); ++r) ASSERT_EQ(v[r], T(0)) << "padding row " << r;
}

TYPED_TEST(FusedPassFactors, ModelWarpSolveOfCyclicLinesMatchesCpuLineSolve) {
  // Periodic y lines (cyclic_tile_line_factors): the warp solve of the modified matrix,
  // then the Sherman-Morrison correction as the kernels store each line, against the CPU
  // backend's cyclic solve, for every chunk capacity and both ends of some.
  using T = TypeParam;
  using B = BoundaryKind;
  std::mt19937 rng(14);
  for (const int m : {3, 4, 5, 40, 96, 97, 100, 545, 640, 802, 1056})
    for (const double scale : {0.3, 4.0, 50.0}) {
      const YLines<T> l = y_lines<T>(test::boundary_mix(B::neumann, B::periodic, B::dirichlet), m, scale, rng);
      const int cap = cuda::fused::chunk_cap(m + 2);
      ASSERT_NE(cap, 0) << m;
      std::vector<T> fac(3 * 32 * static_cast<std::size_t>(cap), T(0));
      const cuda::fused::CyclicTileFactors<T> c =
          cuda::fused::cyclic_tile_line_factors(l.op(), 1, l.tau, cap, fac.data());
      ASSERT_EQ(c.z.size(), static_cast<std::size_t>(m));
      expect_model_cyclic_solve(l, cap, fac, c.s, c.corner_ratio, c.inv_denominator, c.z.data(), m, scale);
    }
}

TYPED_TEST(FusedPassFactors, FusedStepFactorsOfCyclicLinesSolveThemWithinTheirCount) {
  // pass_factors on a periodic axis, as the fused passes read it: no fallback factors (3 n
  // zeros), the warp solve's factors of the modified matrix, corner_ratio, the inverse
  // denominator, z padded to 32 cap values and z by warp rows (the x pass's: node p cap + q
  // at q 32 + p), all within pass_factor_count(n, cap, true).
  // The model solve corrected on every row, padding rows included (as the x pass corrects
  // them), solves the line as the CPU backend does, and leaves the padding rows at 0.
  using T = TypeParam;
  using B = BoundaryKind;
  std::mt19937 rng(16);
  for (const int m : {3, 4, 95, 96, 97, 545, 1056})
    for (const double scale : {0.3, 50.0}) {
      const YLines<T> l = y_lines<T>(test::boundary_mix(B::dirichlet, B::periodic, B::neumann), m, scale, rng);
      const int cap = cuda::fused::chunk_cap(m + 2);
      ASSERT_NE(cap, 0) << m;
      const std::size_t count = cuda::fused::pass_factor_count(m, cap, true);
      const std::size_t by_rows = cuda::fused::cyclic_z_by_rows_offset(cap);
      ASSERT_GE(by_rows, 3 * 32 * static_cast<std::size_t>(cap) + 2 + 32 * static_cast<std::size_t>(cap));
      ASSERT_EQ(by_rows % 32, 0u);
      ASSERT_EQ(count, 3 * static_cast<std::size_t>(m) + by_rows + 32 * static_cast<std::size_t>(cap));
      constexpr std::size_t kGuard = 64;
      const T sentinel = T(-12345);
      std::vector<T> all(count + kGuard, sentinel);
      std::fill(all.begin(), all.begin() + count, T(0));
      const T s = cuda::fused::pass_factors(l.op(), 1, l.tau, cap, all.data());
      EXPECT_EQ(std::count(all.begin() + count, all.end(), sentinel), static_cast<long>(kGuard)) << m;
      EXPECT_TRUE(std::all_of(all.begin(), all.begin() + 3 * m, [](T x) { return x == T(0); })) << m;

      const T* chunk = all.data() + 3 * m;
      const std::size_t solve = 3 * 32 * static_cast<std::size_t>(cap);
      std::vector<T> want(solve, T(0));
      const cuda::fused::CyclicTileFactors<T> c =
          cuda::fused::cyclic_tile_line_factors(l.op(), 1, l.tau, cap, want.data());
      EXPECT_EQ(s, c.s);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), chunk)) << m;
      const T* correction = chunk + solve;
      EXPECT_EQ(correction[0], c.corner_ratio);
      EXPECT_EQ(correction[1], c.inv_denominator);
      const T* z = correction + 2;
      EXPECT_TRUE(std::equal(c.z.begin(), c.z.end(), z)) << m;

      EXPECT_TRUE(std::all_of(z + m, z + 32 * cap, [](T x) { return x == T(0); })) << m;
      const T* z_by_rows = chunk + by_rows;
      for (int p = 0; p < 32; ++p)
        for (int q = 0; q < cap; ++q) {
          const int node = p * cap + q;
          ASSERT_EQ(z_by_rows[q * 32 + p], node < m ? z[node] : T(0)) << m << " node " << node;
        }

      expect_model_cyclic_solve(l, cap, std::vector<T>(chunk, chunk + solve), s, correction[0], correction[1], z,
                                32 * cap, scale);
    }
}

TYPED_TEST(FusedPassFactors, FaceMaskMarksUnknownFacesAndPeriodicAxes) {
  // unknown_face_mask: bit face_index of each Neumann face and of both faces of a periodic
  // axis, and bit kPeriodicAxesBit + axis of a periodic axis; first_unknown and
  // last_unknown agree with it.
  using T = TypeParam;
  using B = BoundaryKind;
  std::mt19937 rng(17);
  BoundarySpec bc;
  bc.face = {B::periodic, B::periodic, B::neumann, B::dirichlet, B::dirichlet, B::neumann};
  const Diffusion<T> d = test::make_diffusion<T>({5, 6, 7}, bc, false, rng);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  using cuda::fused::kPeriodicAxesBit;
  EXPECT_EQ(cuda::fused::unknown_face_mask(op), 0b000011 | 0b000100 | 0b100000 | (1 << kPeriodicAxesBit));
  const int first[3] = {0, 0, 1}, last[3] = {4, 4, 6};
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(cuda::fused::first_unknown(op, axis), first[axis]) << axis;
    EXPECT_EQ(cuda::fused::last_unknown(op, axis), last[axis]) << axis;
  }
}

TYPED_TEST(FusedPassFactors, FusedStepFactorsSolveDirichletLines) {
  // pass_factors, the fused step's factors (its warp solve's part after the 3 n fallback
  // values): lines between Dirichlet faces whose end values are 0, as du is there.
  using T = TypeParam;
  std::mt19937 rng(12);
  const double tol = kLineTolerance<T>;
  for (const int m : {3, 4, 99, 100, 545, 640, 802, 1058})
    for (const double scale : {0.3, 4.0, 50.0}) {
      const YLines<T> l = dirichlet_lines<T>(m, scale, rng);
      const int cap = cuda::fused::chunk_cap(m);
      ASSERT_NE(cap, 0) << m;
      std::vector<T> all(cuda::fused::pass_factor_count(m, cap), T(0));
      const T s = cuda::fused::pass_factors(make_operator_view(l.d, nullptr), 1, l.tau, cap, all.data());
      const std::vector<T> fac(all.begin() + 3 * m, all.end());
      std::vector<T> v(32 * static_cast<std::size_t>(cap), T(0));
      for (int r = 0; r < m - 2; ++r) v[r] = l.at(l.rhs, r + 1);
      model_warp_solve(v, fac, cap, s);
      const LineError e = line_error(0, m - 2, [&](int r) { return v[r]; }, [&](int r) { return l.at(l.want, r + 1); });
      EXPECT_LE(e.err, tol * e.scale) << "n " << m << " tau scale " << scale;
    }
}

TYPED_TEST(FusedPassFactors, LongLinesGetFallbackFactorsWithinTheirCount) {
  // Lines longer than the warp solve takes (cap 0) go to the fused step's fallback
  // Thomas (inv, a*inv, cp): pass_factors must write no more than pass_factor_count(n, 0)
  // values, and those must solve the line.
  using T = TypeParam;
  std::mt19937 rng(13);
  const double tol = kLineTolerance<T>;
  for (const int m : {1059, 1301}) {
    ASSERT_EQ(cuda::fused::chunk_cap(m), 0) << m;
    const YLines<T> l = dirichlet_lines<T>(m, 4.0, rng);
    const std::size_t count = cuda::fused::pass_factor_count(m, 0);
    constexpr std::size_t kGuard = 4096;
    const T sentinel = T(-12345);
    std::vector<T> all(count + kGuard, sentinel);
    std::fill(all.begin(), all.begin() + count, T(0));
    cuda::fused::pass_factors(make_operator_view(l.d, nullptr), 1, l.tau, 0, all.data());
    EXPECT_EQ(std::count(all.begin() + count, all.end(), sentinel), static_cast<long>(kGuard)) << m;

    const T* inv = all.data();
    const T* ainv = inv + m;
    const T* cp = inv + 2 * m;
    std::vector<double> x(m, 0.0);
    double y = 0;
    for (int r = 1; r < m - 1; ++r) x[r] = y = l.at(l.rhs, r) * inv[r] - ainv[r] * y;
    for (int r = m - 3; r >= 1; --r) x[r] -= cp[r] * x[r + 1];
    const LineError e = line_error(1, m - 1, [&](int r) { return x[r]; }, [&](int r) { return l.at(l.want, r); });
    EXPECT_LE(e.err, tol * e.scale) << "n " << m;
  }
}

}  // namespace
}  // namespace adi3d
