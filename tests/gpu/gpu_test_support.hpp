#pragma once
// Shared pieces of the CUDA backend tests: a typed fixture holding a CUDA and a CPU backend
// (skipping where no device is present, synchronising in TearDown so an asynchronous
// fault fails the test that caused it), transfers, boundary mixes and type-tied tolerances.
#include "solvers/backend.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/diffusion.hpp"
#include "solvers/douglas_step.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/material_index.hpp"
#include "tests/unit/grid_fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace adi3d::test {

using Precisions = ::testing::Types<float, double>;

// Relative tolerances (to the largest reference entry) for results that take different
// but equally accurate paths on the two backends: FMA contraction on the GPU, PCR against
// Thomas, different summation orders. A few hundred ulps of the type.
template <class T>
double tolerance() {
  return std::is_same<T, float>::value ? 5e-5 : 1e-11;
}

template <class T>
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda_device_summary();
    gpu_ = make_cuda_backend<T>(0);
    cpu_ = make_cpu_backend<T>();
  }
  void TearDown() override {
    if (gpu_) gpu_->synchronize();
  }

  Array<T> to_gpu(const std::vector<T>& host) {
    Array<T> a = gpu_->allocate(host.size());
    gpu_->upload(host.data(), a.data(), host.size());
    return a;
  }
  Array<T> to_cpu(const std::vector<T>& host) {
    Array<T> a = cpu_->allocate(host.size());
    cpu_->upload(host.data(), a.data(), host.size());
    return a;
  }
  // A field of 4 materials (an 800x contrast) in place of alpha's values, for the tests of
  // the kernels that read a material index.
  static void make_four_materials(std::vector<T>& alpha) {
    const T values[] = {T(0.05), T(1), T(40), T(3)};
    for (std::size_t p = 0; p < alpha.size(); ++p) alpha[p] = values[(p * 7 + p / 5) % 4];
  }
  // alpha's material index on the GPU, attached to op (as DouglasStepper keeps it); the
  // returned arrays must outlive op's use.
  MaterialArrays<T> attach_material_index(OperatorView<T>& op, const std::vector<T>& alpha, std::array<int, 3> n) {
    MaterialArrays<T> m = upload_materials(*gpu_, index_materials(alpha, n));
    m.attach(op);
    return m;
  }
  std::vector<T> from_gpu(const Array<T>& a) {
    std::vector<T> host(a.size());
    gpu_->download(a.data(), host.data(), a.size());
    return host;
  }
  std::vector<T> from_cpu(const Array<T>& a) {
    return std::vector<T>(a.data(), a.data() + a.size());
  }

  // DouglasStepper (theta 0.5) on the GPU under `policy` and on the CPU, `steps` steps of
  // 2e-3 from random data; the last step's increment norms into gn and cn where given.
  // Returns the relative difference of the results.
  double stepper_difference(const Diffusion<T>& d, const Forcing<T>& forcing, const CudaPolicy& policy,
                            int steps, Norms* gn = nullptr, Norms* cn = nullptr);

  std::unique_ptr<Backend<T>> gpu_;
  std::unique_ptr<Backend<T>> cpu_;
  std::mt19937 rng_{20261123};
};

// Largest |got - ref| over max(1, max |ref|).
template <class T>
double relative_difference(const std::vector<T>& ref, const std::vector<T>& got) {
  double scale = 1, diff = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) {
    scale = std::max(scale, std::fabs(static_cast<double>(ref[e])));
    diff = std::max(diff, std::fabs(static_cast<double>(got[e]) - static_cast<double>(ref[e])));
    if (std::isnan(static_cast<double>(got[e]))) return std::numeric_limits<double>::infinity();
  }
  return diff / scale;
}

// ADI3D_GPU_QUICK=1 thins the boundary mixes (for compute-sanitizer runs, which are slow).
inline bool quick_mode() { return std::getenv("ADI3D_GPU_QUICK") != nullptr; }

template <class V>
V thinned(const V& all, std::size_t every) {
  if (!quick_mode()) return all;
  V out;
  for (std::size_t e = 0; e < all.size(); ++e)
    if (e % every == 0 || e + 1 == all.size()) out.push_back(all[e]);
  return out;
}

// Boundary mixes: per axis Dirichlet/Neumann in every lo/hi combination, or periodic.
inline std::vector<BoundarySpec> all_face_mixes() {
  using B = BoundaryKind;
  const B opts[5][2] = {{B::dirichlet, B::dirichlet},
                        {B::neumann, B::neumann},
                        {B::dirichlet, B::neumann},
                        {B::neumann, B::dirichlet},
                        {B::periodic, B::periodic}};
  std::vector<BoundarySpec> out;
  for (int x = 0; x < 5; ++x)
    for (int y = 0; y < 5; ++y)
      for (int z = 0; z < 5; ++z) {
        BoundarySpec bc;
        const int o[3] = {x, y, z};
        for (int a = 0; a < 3; ++a) {
          bc.face[2 * a] = opts[o[a]][0];
          bc.face[2 * a + 1] = opts[o[a]][1];
        }
        out.push_back(bc);
      }
  return thinned(out, 9);
}

inline std::vector<BoundarySpec> axis_mixes() {
  using B = BoundaryKind;
  const B k[3] = {B::dirichlet, B::neumann, B::periodic};
  std::vector<BoundarySpec> out;
  for (B x : k)
    for (B y : k)
      for (B z : k) out.push_back(boundary_mix(x, y, z));
  return thinned(out, 5);
}

inline std::string describe(const BoundarySpec& bc, std::array<int, 3> n, bool variable) {
  auto c = [](BoundaryKind k) {
    return k == BoundaryKind::dirichlet ? 'D' : k == BoundaryKind::neumann ? 'N' : 'P';
  };
  std::string s = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]) + " ";
  for (int f = 0; f < 6; ++f) s += c(bc.face[f]);
  return s + (variable ? " variable alpha" : " constant alpha");
}

// Smooth data: source f = sin(x + 2y) cos(z) (1 + t); on every face the value
// cos(x - y + z + speed t), a Dirichlet value or a Neumann outward derivative as the face's
// kind says (fixed in time when speed is 0).
template <class T>
class SmoothForcing final : public Forcing<T> {
 public:
  // insulated: no data on any face (0: Dirichlet faces hold 0, Neumann faces are insulated).
  SmoothForcing(const Grid3& g, double speed, bool insulated = false) : g_(g), speed_(speed), insulated_(insulated) {}
  bool has_source() const override { return true; }
  bool source_depends_on_time() const override { return true; }
  void source(double t, T* v) const override {
    for (int k = 0; k < g_.n[2]; ++k)
      for (int j = 0; j < g_.n[1]; ++j)
        for (int i = 0; i < g_.n[0]; ++i)
          v[g_.index(i, j, k)] = static_cast<T>(std::sin(g_.coord(0, i) + 2 * g_.coord(1, j)) *
                                                std::cos(g_.coord(2, k)) * (1 + t));
  }
  bool boundary_depends_on_time(int) const override { return speed_ != 0 && !insulated_; }
  bool boundary_is_zero(int) const override { return insulated_; }
  void boundary(int face, double t, T* v) const override {
    const FaceAxes fa = face_axes(face);
    if (insulated_) {
      std::fill(v, v + static_cast<std::size_t>(g_.n[fa.u]) * g_.n[fa.v], T(0));
      return;
    }
    for (int b = 0; b < g_.n[fa.v]; ++b)
      for (int a = 0; a < g_.n[fa.u]; ++a) {
        int idx[3];
        idx[fa.axis] = face % 2 == 0 ? 0 : g_.n[fa.axis] - 1;
        idx[fa.u] = a;
        idx[fa.v] = b;
        const double x = g_.coord(0, idx[0]), y = g_.coord(1, idx[1]), z = g_.coord(2, idx[2]);
        v[a + static_cast<std::size_t>(g_.n[fa.u]) * b] = static_cast<T>(std::cos(x - y + z + speed_ * t));
      }
  }

 private:
  Grid3 g_;
  double speed_;
  bool insulated_;
};

template <class T>
double CudaTest<T>::stepper_difference(const Diffusion<T>& d, const Forcing<T>& forcing, const CudaPolicy& policy,
                                       int steps, Norms* gn, Norms* cn) {
  const auto u0 = random_field<T>(d.grid.size(), rng_);
  set_cuda_policy(*gpu_, policy);
  DouglasStepper<T> gs(*gpu_, d, forcing, 0.5);
  DouglasStepper<T> cs(*cpu_, d, forcing, 0.5);
  Array<T> gu = to_gpu(u0), cu = to_cpu(u0);
  gs.initialize(gu.data(), 0.0);
  cs.initialize(cu.data(), 0.0);
  const double dt = 2e-3;
  for (int step = 0; step < steps; ++step) {
    gs.step(gu.data(), step * dt, dt, gn);
    cs.step(cu.data(), step * dt, dt, cn);
  }
  return relative_difference(from_cpu(cu), from_gpu(gu));
}

}  // namespace adi3d::test
