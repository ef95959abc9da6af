// The Douglas ADI step (written once over the Backend interface) run on the CUDA and CPU
// backends for a few steps with time-dependent Dirichlet data, Neumann data and a source;
// every stencil and x-solve variant must give the CPU result.
#include "gpu_test_support.hpp"
#include "solvers/douglas_step.hpp"
#include "solvers/face_layout.hpp"

#include <cmath>

namespace adi3d::test {
namespace {

// Smooth data: f = sin(x + 2y) cos(z) (1 + t), boundary values cos(x - y + z + 3t) on
// every face (Dirichlet value or Neumann outward derivative, as the face's kind says).
template <class T>
class SmoothForcing final : public Forcing<T> {
 public:
  explicit SmoothForcing(const Grid3& g) : g_(g) {}
  bool has_source() const override { return true; }
  bool source_depends_on_time() const override { return true; }
  void source(double t, T* v) const override {
    for (int k = 0; k < g_.n[2]; ++k)
      for (int j = 0; j < g_.n[1]; ++j)
        for (int i = 0; i < g_.n[0]; ++i)
          v[g_.index(i, j, k)] = static_cast<T>(std::sin(g_.coord(0, i) + 2 * g_.coord(1, j)) *
                                                std::cos(g_.coord(2, k)) * (1 + t));
  }
  bool boundary_depends_on_time(int) const override { return true; }
  bool boundary_is_zero(int) const override { return false; }
  void boundary(int face, double t, T* v) const override {
    const FaceAxes fa = face_axes(face);
    for (int b = 0; b < g_.n[fa.v]; ++b)
      for (int a = 0; a < g_.n[fa.u]; ++a) {
        int idx[3];
        idx[fa.axis] = face % 2 == 0 ? 0 : g_.n[fa.axis] - 1;
        idx[fa.u] = a;
        idx[fa.v] = b;
        const double x = g_.coord(0, idx[0]), y = g_.coord(1, idx[1]), z = g_.coord(2, idx[2]);
        v[a + static_cast<std::size_t>(g_.n[fa.u]) * b] = static_cast<T>(std::cos(x - y + z + 3 * t));
      }
  }

 private:
  Grid3 g_;
};

template <class T>
class CudaDouglas : public CudaTest<T> {
 protected:
  double compare(const BoundarySpec& bc, std::array<int, 3> n, const CudaPolicy& policy) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, true, this->rng_);
    const SmoothForcing<T> forcing(d.grid);
    const auto u0 = random_field<T>(d.grid.size(), this->rng_);
    set_cuda_policy(*this->gpu_, policy);
    DouglasStepper<T> gs(*this->gpu_, d, forcing, 0.5);
    DouglasStepper<T> cs(*this->cpu_, d, forcing, 0.5);
    Array<T> gu = this->to_gpu(u0), cu = this->to_cpu(u0);
    gs.initialize(gu.data(), 0.0);
    cs.initialize(cu.data(), 0.0);
    const double dt = 2e-3;
    Norms gn{}, cn{};
    for (int step = 0; step < 4; ++step) {
      gs.step(gu.data(), step * dt, dt, &gn);
      cs.step(cu.data(), step * dt, dt, &cn);
    }
    EXPECT_NEAR(gn.sum_squares, cn.sum_squares, 1e3 * tolerance<T>() * cn.sum_squares);
    return relative_difference(this->from_cpu(cu), this->from_gpu(gu));
  }
};
TYPED_TEST_SUITE(CudaDouglas, Precisions);

TYPED_TEST(CudaDouglas, DirichletStepsMatchCpu) {
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  EXPECT_LE(this->compare(bc, {35, 19, 23}, CudaPolicy{}), 20 * tolerance<TypeParam>());
}

TYPED_TEST(CudaDouglas, MixedBoundariesMatchCpuForEveryVariant) {
  BoundarySpec bc = boundary_mix(BoundaryKind::periodic, BoundaryKind::neumann,
                                 BoundaryKind::dirichlet);
  bc.face[face_index(1, 1)] = BoundaryKind::dirichlet;  // y: Neumann below, Dirichlet above
  for (StencilVariant s : {StencilVariant::naive, StencilVariant::zpencil,
                           StencilVariant::zpencil_smem, StencilVariant::shuffle})
    for (XSolveVariant x : {XSolveVariant::pcr_thomas, XSolveVariant::thread_thomas}) {
      CudaPolicy p;
      p.stencil = s;
      p.x_solve = x;
      EXPECT_LE(this->compare(bc, {40, 21, 17}, p), 20 * tolerance<TypeParam>())
          << to_string(s) << " " << to_string(x);
    }
}

TYPED_TEST(CudaDouglas, ResidualMatchesCpu) {
  const BoundarySpec bc = boundary_mix(BoundaryKind::neumann, BoundaryKind::periodic,
                                       BoundaryKind::neumann);
  const Diffusion<TypeParam> d = make_diffusion<TypeParam>({29, 12, 31}, bc, true, this->rng_);
  const SmoothForcing<TypeParam> forcing(d.grid);
  DouglasStepper<TypeParam> gs(*this->gpu_, d, forcing, 1.0);
  DouglasStepper<TypeParam> cs(*this->cpu_, d, forcing, 1.0);
  const auto u = random_field<TypeParam>(d.grid.size(), this->rng_);
  Array<TypeParam> gu = this->to_gpu(u), cu = this->to_cpu(u);
  Array<TypeParam> gr = this->gpu_->allocate(u.size()), cr = this->cpu_->allocate(u.size());
  gs.residual(gu.data(), 0.3, gr.data());
  cs.residual(cu.data(), 0.3, cr.data());
  EXPECT_LE(relative_difference(this->from_cpu(cr), this->from_gpu(gr)), tolerance<TypeParam>());
}

}  // namespace
}  // namespace adi3d::test
