// The GPU's direct solves run on the host: their point rules (solvers/spectral_modes.hpp: the
// odd/even extension of each plane, the z solve of every mode; solvers/spectral_lines.hpp:
// the line transforms' passes before and after a real FFT of length n - 1) around FFTW's
// r2c and c2r, which lay data out as cuFFT's R2C and C2R do, against the CPU's direct
// solve, on every face mix, odd, even and the smallest sizes, with alpha constant per axis
// and over layers. What the GPU adds to this is cuFFT and the launches (tests/gpu).
#include "solvers/spectral_lines.hpp"
#include "solvers/spectral_modes.hpp"
#include "tests/unit/grid_fixtures.hpp"

#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace adi3d::test {
namespace {

using B = BoundaryKind;

template <class T>
struct ComplexFft;
template <>
struct ComplexFft<double> {
  static void run(bool forward, int planes, const int* n, const int* real_embed, const int* complex_embed,
                  int real_dist, int complex_dist, double* data) {
    fftw_plan p = forward ? fftw_plan_many_dft_r2c(2, n, planes, data, real_embed, 1, real_dist,
                                                   reinterpret_cast<fftw_complex*>(data), complex_embed, 1,
                                                   complex_dist, FFTW_ESTIMATE)
                          : fftw_plan_many_dft_c2r(2, n, planes, reinterpret_cast<fftw_complex*>(data), complex_embed,
                                                   1, complex_dist, data, real_embed, 1, real_dist, FFTW_ESTIMATE);
    ASSERT_NE(p, nullptr);
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
};
template <>
struct ComplexFft<float> {
  static void run(bool forward, int planes, const int* n, const int* real_embed, const int* complex_embed,
                  int real_dist, int complex_dist, float* data) {
    fftwf_plan p = forward ? fftwf_plan_many_dft_r2c(2, n, planes, data, real_embed, 1, real_dist,
                                                     reinterpret_cast<fftwf_complex*>(data), complex_embed, 1,
                                                     complex_dist, FFTW_ESTIMATE)
                           : fftwf_plan_many_dft_c2r(2, n, planes, reinterpret_cast<fftwf_complex*>(data),
                                                     complex_embed, 1, complex_dist, data, real_embed, 1, real_dist,
                                                     FFTW_ESTIMATE);
    ASSERT_NE(p, nullptr);
    fftwf_execute(p);
    fftwf_destroy_plan(p);
  }
};

// e = (-A)^-1 r by the GPU's algorithm, step for step: extend, r2c, every mode's z line, c2r, scale.
template <class T>
std::vector<T> extension_solve(const OperatorView<T>& op, const T* layers, const std::vector<T>& r) {
  const SpectralSystems<T> systems = spectral_systems(op, layers);
  const SpectralGeometry& g = systems.g;
  const std::vector<T>& rows = systems.rows;
  const double wx = systems.wx, wy = systems.wy;
  const int mz = g.range[2].count;
  const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
  std::vector<T> buf(2 * modes * mz), cp(modes * mz), q(modes * mz);
  const std::size_t nx = static_cast<std::size_t>(g.n[0]), nxy = nx * g.n[1];
  for (int kk = 0; kk < mz; ++kk)
    for (int s = 0; s < g.period[1]; ++s)
      for (int t = 0; t < g.real_row; ++t) {
        const Mirror mx = t < g.period[0] ? mirror(g.kind[0], t, g.n[0]) : Mirror{0, 0};
        const Mirror my = mirror(g.kind[1], s, g.n[1]);
        const std::size_t k = static_cast<std::size_t>(g.range[2].first + kk);
        buf[extension_index(g, t, s, kk)] =
            static_cast<T>(mx.sign * my.sign) * r[mx.node + nx * my.node + nxy * k];
      }
  const int n[2] = {g.period[1], g.period[0]};
  const int real_embed[2] = {g.period[1], g.real_row}, complex_embed[2] = {g.period[1], g.complex_row};
  const int real_dist = g.period[1] * g.real_row, complex_dist = g.period[1] * g.complex_row;
  ComplexFft<T>::run(true, mz, n, real_embed, complex_embed, real_dist, complex_dist, buf.data());
  for (std::size_t m = 0; m < modes; ++m) solve_mode_line(buf.data(), cp.data(), q.data(), rows.data(), g, wx, wy, m);
  ComplexFft<T>::run(false, mz, n, real_embed, complex_embed, real_dist, complex_dist, buf.data());
  std::vector<T> e(r.size(), T(0));
  const T scale = static_cast<T>(1.0 / (static_cast<double>(g.period[0]) * g.period[1]));
  for (int kk = 0; kk < mz; ++kk)
    for (int j = g.range[1].first; j < g.range[1].first + g.range[1].count; ++j)
      for (int i = g.range[0].first; i < g.range[0].first + g.range[0].count; ++i)
        e[i + nx * j + nxy * (g.range[2].first + kk)] = scale * buf[extension_index(g, i, j, kk)];
  return e;
}

template <class T>
struct RealFft;
template <>
struct RealFft<double> {
  static void run(int m, double* data) {  // in place: m reals in, m / 2 + 1 complex values out
    fftw_plan p = fftw_plan_dft_r2c_1d(m, data, reinterpret_cast<fftw_complex*>(data), FFTW_ESTIMATE);
    ASSERT_NE(p, nullptr);
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
};
template <>
struct RealFft<float> {
  static void run(int m, float* data) {
    fftwf_plan p = fftwf_plan_dft_r2c_1d(m, data, reinterpret_cast<fftwf_complex*>(data), FFTW_ESTIMATE);
    ASSERT_NE(p, nullptr);
    fftwf_execute(p);
    fftwf_destroy_plan(p);
  }
};

// X_first .. X_first+count-1 of a line whose unknown nodes first .. first+count-1 hold `a`,
// by the line transforms' passes (line_transforms.cu does the same a warp a line).
template <class T>
std::vector<T> line_transform(SpectralAxis kind, int n, int first, int count, const T* a) {
  const int period = 2 * (n - 1);
  std::vector<T> e(static_cast<std::size_t>(line_slots(n - 1)));
  for (int t = 0; t < period; ++t) {
    const Mirror at = mirror(kind, t, n);
    const int i = at.node - first;
    e[t] = i >= 0 && i < count ? static_cast<T>(at.sign) * a[i] : T(0);
  }
  RealFft<T>::run(period, e.data());
  std::vector<T> x(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) x[i] = line_mode_value(kind, e[2 * (first + i)], e[2 * (first + i) + 1]);
  return x;
}

// e = (-A)^-1 r by the GPU's line transforms, pass for pass: x along r's rows, y, every
// mode's z line, y, x, scaled.
template <class T>
std::vector<T> line_transform_solve(const OperatorView<T>& op, const T* layers, const std::vector<T>& r) {
  const SpectralSystems<T> systems = spectral_systems(op, layers);
  const SpectralGeometry& g = systems.g;
  const std::vector<T>& rows = systems.rows;
  const double wx = systems.wx, wy = systems.wy;
  const SpectralRange rx = g.range[0], ry = g.range[1], rz = g.range[2];
  const std::size_t c0 = rx.count, c1 = ry.count, modes = c0 * c1;
  const std::size_t nx = static_cast<std::size_t>(g.n[0]), nxy = nx * g.n[1];
  std::vector<T> by_kx(modes * rz.count), z(modes * rz.count), cp(z.size()), q(z.size());
  for (int kk = 0; kk < rz.count; ++kk) {
    for (std::size_t jj = 0; jj < c1; ++jj) {  // x: into (kk, kx, j)
      const T* row = &r[rx.first + nx * (ry.first + jj) + nxy * (rz.first + kk)];
      const std::vector<T> xt = line_transform(g.kind[0], g.n[0], rx.first, rx.count, row);
      for (std::size_t i = 0; i < c0; ++i) by_kx[(kk * c0 + i) * c1 + jj] = xt[i];
    }
    for (std::size_t i = 0; i < c0; ++i) {  // y: into (kk, kx, ky)
      const std::vector<T> yt = line_transform(g.kind[1], g.n[1], ry.first, ry.count, &by_kx[(kk * c0 + i) * c1]);
      std::copy(yt.begin(), yt.end(), z.begin() + (kk * c0 + i) * c1);
    }
  }
  for (std::size_t m = 0; m < modes; ++m) {
    const int kx = static_cast<int>(m / c1) + rx.first, ky = static_cast<int>(m % c1) + ry.first;
    const T sigma =
        static_cast<T>(spectral_eigenvalue(wx, kx, g.period[0]) + spectral_eigenvalue(wy, ky, g.period[1]));
    solve_z_line<1>(z.data() + m, modes, cp.data(), q.data(), modes, m, rows.data(), g, sigma,
                    g.z_singular && kx == 0 && ky == 0);
  }
  std::vector<T> e(r.size(), T(0));
  const T scale = static_cast<T>(4.0 / ((g.n[0] - 1.0) * (g.n[1] - 1.0)));
  for (int kk = 0; kk < rz.count; ++kk) {
    std::vector<T> by_j(modes);  // y back: (j, kx)
    for (std::size_t i = 0; i < c0; ++i) {
      const std::vector<T> yt = line_transform(g.kind[1], g.n[1], ry.first, ry.count, &z[(kk * c0 + i) * c1]);
      for (std::size_t jj = 0; jj < c1; ++jj) by_j[jj * c0 + i] = yt[jj];
    }
    for (std::size_t jj = 0; jj < c1; ++jj) {  // x back, onto the nodes
      const std::vector<T> xt = line_transform(g.kind[0], g.n[0], rx.first, rx.count, &by_j[jj * c0]);
      T* row = &e[rx.first + nx * (ry.first + jj) + nxy * (rz.first + kk)];
      for (std::size_t i = 0; i < c0; ++i) row[i] = scale * xt[i];
    }
  }
  return e;
}

// A right-hand side on the unknown nodes (0 on Dirichlet ones), compatible where -A is
// singular (its half-cell weighted sum removed), and the solutions without their mean there.
template <class T>
std::vector<T> random_rhs(const OperatorView<T>& op, bool anchored, std::mt19937& rng) {
  Grid3 g;
  g.n = {op.n[0], op.n[1], op.n[2]};
  std::vector<T> r = random_field<T>(g.size(), rng);
  double sum = 0, weights = 0;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        T& v = r[g.index(i, j, k)];
        if (is_dirichlet_node(op, i, j, k)) {
          v = 0;
          continue;
        }
        double w = 1;
        const int idx[3] = {i, j, k};
        for (int a = 0; a < 3; ++a)
          if (op.lo[a] != BoundaryKind::periodic && (idx[a] == 0 || idx[a] == g.n[a] - 1)) w *= 0.5;
        sum += w * v;
        weights += w;
      }
  if (!anchored)
    for (T& v : r) v = static_cast<T>(v - sum / weights);
  return r;
}

template <class T>
void remove_mean(std::vector<T>& u) {
  double mean = 0;
  for (T v : u) mean += v;
  mean /= static_cast<double>(u.size());
  for (T& v : u) v = static_cast<T>(v - mean);
}

enum class GpuWay { extension, line_transforms };

template <class T>
void expect_gpu_way_matches(GpuWay way, const BoundarySpec& bc, std::array<int, 3> n, bool layered,
                            std::array<double, 2> robin_h = {0, 0}) {
  SCOPED_TRACE(::testing::Message() << (way == GpuWay::extension ? "extension" : "line transforms") << ", faces "
                                    << static_cast<int>(bc.face[0]) << static_cast<int>(bc.face[2])
                                    << static_cast<int>(bc.face[4]) << static_cast<int>(bc.face[5]) << " n " << n[0]
                                    << " " << n[1] << " " << n[2] << (layered ? " layered" : ""));
  std::mt19937 rng(17);
  Diffusion<T> d = make_diffusion<T>(n, bc, false, rng);
  std::vector<T> layers;
  if (layered) {
    layers = random_field<T>(static_cast<std::size_t>(n[2]), rng, 0.1, 100.0);
    d.alpha_field.resize(d.grid.size());
    const std::size_t plane = static_cast<std::size_t>(n[0]) * n[1];
    for (std::size_t p = 0; p < d.grid.size(); ++p) d.alpha_field[p] = layers[p / plane];
  }
  OperatorView<T> op = make_operator_view(d, layered ? d.alpha_field.data() : nullptr);
  op.robin_h[4] = static_cast<T>(robin_h[0]);  // Robin z faces: the kernels see Neumann faces with h
  op.robin_h[5] = static_cast<T>(robin_h[1]);
  const bool anchored = bc.has_dirichlet() || robin_h[0] > 0 || robin_h[1] > 0;
  const std::vector<T> r = random_rhs(op, anchored, rng);
  const T* layer_alpha = layered ? layers.data() : nullptr;
  std::vector<T> gpu_way = way == GpuWay::extension ? extension_solve(op, layer_alpha, r)
                                                    : line_transform_solve(op, layer_alpha, r);
  const auto cpu = make_cpu_backend<T>();
  SpectralLayers<T> spectral_layers;
  spectral_layers.alpha = layers;
  std::vector<T> cpu_way(r.size(), T(0)), scratch = r;
  cpu->make_spectral_solve(op, spectral_layers)->solve(scratch.data(), cpu_way.data());
  if (!anchored) {
    remove_mean(gpu_way);
    remove_mean(cpu_way);
  }
  double largest = 0, diff = 0;
  for (std::size_t p = 0; p < r.size(); ++p) {
    largest = std::max(largest, std::fabs(static_cast<double>(cpu_way[p])));
    diff = std::max(diff, std::fabs(static_cast<double>(gpu_way[p]) - cpu_way[p]));
  }
  EXPECT_GT(largest, 0.0);
  EXPECT_LE(diff, (std::is_same<T, float>::value ? 1e-4 : 1e-11) * largest);
}

// The extension solve on every face mix; the line transforms where x and y are not periodic.
template <class T>
void expect_gpu_ways_match(const BoundarySpec& bc, std::array<int, 3> n, bool layered,
                           std::array<double, 2> robin_h = {0, 0}) {
  expect_gpu_way_matches<T>(GpuWay::extension, bc, n, layered, robin_h);
  if (!bc.periodic(0) && !bc.periodic(1)) expect_gpu_way_matches<T>(GpuWay::line_transforms, bc, n, layered, robin_h);
}

template <class T>
class SpectralModes : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpectralModes, Precisions);

TYPED_TEST(SpectralModes, GpuWaysMatchTheCpuOnEveryFaceMix) {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  const std::array<int, 3> sizes[] = {{7, 6, 5}, {3, 4, 3}, {4, 3, 4}, {12, 9, 10}};
  for (const auto& n : sizes)
    for (B x : kinds)
      for (B y : kinds)
        for (int z = 0; z < 5; ++z) {
          BoundarySpec bc = boundary_mix(x, y, z < 3 ? kinds[z] : z == 3 ? B::dirichlet : B::neumann);
          if (z == 3) bc.face[5] = B::neumann;
          if (z == 4) bc.face[5] = B::dirichlet;
          expect_gpu_ways_match<TypeParam>(bc, n, false);
          expect_gpu_ways_match<TypeParam>(bc, n, true);
        }
}

// Robin z faces (one h each): the z systems' end rows carry beta.
TYPED_TEST(SpectralModes, GpuWaysMatchTheCpuWithRobinZFaces) {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  for (B x : kinds)
    for (B y : kinds) {
      expect_gpu_ways_match<TypeParam>(boundary_mix(x, y, B::neumann), {7, 6, 9}, false, {2.5, 0.7});
      expect_gpu_ways_match<TypeParam>(boundary_mix(x, y, B::neumann), {4, 5, 3}, true, {0, 3.0});
      BoundarySpec mixed = boundary_mix(x, y, B::neumann);
      mixed.face[5] = B::dirichlet;
      expect_gpu_ways_match<TypeParam>(mixed, {6, 7, 8}, false, {1.5, 0});
    }
}

// The line transforms' passes around a real FFT give the DST-I and DCT-I by their sums, for
// odd and even lengths, and applied twice the line times (n - 1) / 2.
TYPED_TEST(SpectralModes, LineTransformsAreTheSineAndCosineSums) {
  using T = TypeParam;
  const double tol = std::is_same<T, float>::value ? 2e-5 : 1e-12;
  std::mt19937 rng(5);
  for (int n : {3, 4, 5, 6, 9, 16, 17, 33, 64}) {
    for (SpectralAxis kind : {SpectralAxis::sine, SpectralAxis::cosine}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << (kind == SpectralAxis::sine ? " sine" : " cosine"));
      const int m = n - 1, first = kind == SpectralAxis::sine ? 1 : 0, count = kind == SpectralAxis::sine ? n - 2 : n;
      const std::vector<T> a = random_field<T>(static_cast<std::size_t>(count), rng, -1.0, 1.0);
      const std::vector<T> x = line_transform(kind, n, first, count, a.data());
      ASSERT_EQ(x.size(), a.size());
      double scale = 0;
      for (int i = 0; i < count; ++i) {
        const int k = first + i;
        double sum = 0;
        for (int c = 0; c < count; ++c) {
          const int j = first + c;
          const double angle = 3.14159265358979323846 * j * k / m;
          const double weight = kind == SpectralAxis::cosine && (j == 0 || j == m) ? 0.5 : 1.0;
          sum += weight * a[c] * (kind == SpectralAxis::sine ? std::sin(angle) : std::cos(angle));
        }
        scale = std::max(scale, std::fabs(sum));
        EXPECT_NEAR(x[i], sum, tol * count) << "wavenumber " << k;
      }
      EXPECT_GT(scale, 0.0);
      const std::vector<T> back = line_transform(kind, n, first, count, x.data());
      for (int i = 0; i < count; ++i) EXPECT_NEAR(back[i] * 2.0 / m, a[i], tol * count) << "node " << first + i;
    }
  }
}

}  // namespace
}  // namespace adi3d::test
