// The GPU's direct solve run on the host: its point rules (solvers/spectral_modes.hpp: the
// odd/even extension of each plane, the z solve of every complex mode) around FFTW's r2c
// and c2r, which lay data out as cuFFT's R2C and C2R do, against the CPU's direct solve, on
// every face mix, odd, even and the smallest sizes, with alpha constant per axis and over
// layers. What the GPU adds to this is cuFFT and the launches (tests/gpu).
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
  const SpectralGeometry g = spectral_geometry(op);
  std::vector<T> rows(4 * static_cast<std::size_t>(op.n[2]));
  spectral_row_table(op, layers, rows.data());
  const double wx = axis_weight(op, 0, layers != nullptr), wy = axis_weight(op, 1, layers != nullptr);
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

template <class T>
void expect_extension_solve_matches(const BoundarySpec& bc, std::array<int, 3> n, bool layered,
                                    std::array<double, 2> robin_h = {0, 0}) {
  SCOPED_TRACE(::testing::Message() << "faces " << static_cast<int>(bc.face[0]) << static_cast<int>(bc.face[2])
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
  std::vector<T> gpu_way = extension_solve(op, layered ? layers.data() : nullptr, r);
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

template <class T>
class SpectralModes : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SpectralModes, Precisions);

TYPED_TEST(SpectralModes, ExtensionSolveMatchesTheCpuOnEveryFaceMix) {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  const std::array<int, 3> sizes[] = {{7, 6, 5}, {3, 4, 3}, {4, 3, 4}, {12, 9, 10}};
  for (const auto& n : sizes)
    for (B x : kinds)
      for (B y : kinds)
        for (int z = 0; z < 5; ++z) {
          BoundarySpec bc = boundary_mix(x, y, z < 3 ? kinds[z] : z == 3 ? B::dirichlet : B::neumann);
          if (z == 3) bc.face[5] = B::neumann;
          if (z == 4) bc.face[5] = B::dirichlet;
          expect_extension_solve_matches<TypeParam>(bc, n, false);
          expect_extension_solve_matches<TypeParam>(bc, n, true);
        }
}

// Robin z faces (one h each): the z systems' end rows carry beta.
TYPED_TEST(SpectralModes, ExtensionSolveMatchesTheCpuWithRobinZFaces) {
  const B kinds[3] = {B::dirichlet, B::neumann, B::periodic};
  for (B x : kinds)
    for (B y : kinds) {
      expect_extension_solve_matches<TypeParam>(boundary_mix(x, y, B::neumann), {7, 6, 9}, false, {2.5, 0.7});
      expect_extension_solve_matches<TypeParam>(boundary_mix(x, y, B::neumann), {4, 5, 3}, true, {0, 3.0});
      BoundarySpec mixed = boundary_mix(x, y, B::neumann);
      mixed.face[5] = B::dirichlet;
      expect_extension_solve_matches<TypeParam>(mixed, {6, 7, 8}, false, {1.5, 0});
    }
}

}  // namespace
}  // namespace adi3d::test
