// The Douglas ADI step (written once over the Backend interface) run on the CUDA and CPU
// backends for a few steps with time-dependent Dirichlet data, Neumann data and a source;
// every stencil and x-solve variant must give the CPU result.
#include "gpu_test_support.hpp"
#include "solvers/douglas_step.hpp"
#include "solvers/face_layout.hpp"

#include <cmath>

namespace adi3d::test {
namespace {

template <class T>
class CudaDouglas : public CudaTest<T> {
 protected:
  double compare(const BoundarySpec& bc, std::array<int, 3> n, const CudaPolicy& policy) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, true, this->rng_);
    Norms gn{}, cn{};
    const double difference = this->stepper_difference(d, SmoothForcing<T>(d.grid, 3), policy, 4, &gn, &cn);
    EXPECT_NEAR(gn.sum_squares, cn.sum_squares, 1e3 * tolerance<T>() * cn.sum_squares);
    return difference;
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
  for (StencilVariant s : kStencilVariants)
    for (XSolveVariant x : {XSolveVariant::pcr_thomas, XSolveVariant::thread_thomas}) {
      CudaPolicy p;
      p.stencil = s;
      p.x_solve = x;
      EXPECT_LE(this->compare(bc, {40, 21, 17}, p), 20 * tolerance<TypeParam>())
          << to_string(s) << " " << to_string(x);
    }
}

// A field of a few materials takes its material index on the GPU (the stepper builds it
// where the backend reads one) on every boundary mix: the step's stencil and x solve read
// it outside the fused step too (Neumann and periodic faces), and must give the CPU result.
TYPED_TEST(CudaDouglas, MaterialFieldsMatchCpu) {
  using T = TypeParam;
  for (const BoundaryKind x : {BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::periodic}) {
    BoundarySpec bc = boundary_mix(x, BoundaryKind::neumann, BoundaryKind::dirichlet);
    bc.face[face_index(1, 1)] = BoundaryKind::dirichlet;  // y: Neumann below, Dirichlet above
    Diffusion<T> d = make_diffusion<T>({37, 21, 18}, bc, true, this->rng_);
    const T values[] = {T(0.05), T(1), T(40), T(3)};
    for (int k = 0; k < d.grid.n[2]; ++k)
      for (int j = 0; j < d.grid.n[1]; ++j)
        for (int i = 0; i < d.grid.n[0]; ++i)
          d.alpha_field[d.grid.index(i, j, k)] = values[(i / 4 + j / 3 + (k * k) / 7) % 4];
    const SmoothForcing<T> forcing(d.grid, 3);
    {
      set_cuda_policy(*this->gpu_, CudaPolicy{});
      DouglasStepper<T> gs(*this->gpu_, d, forcing, 0.5);
      EXPECT_NE(gs.view().material, nullptr);
      CudaPolicy off;
      off.material_index = false;
      set_cuda_policy(*this->gpu_, off);
      DouglasStepper<T> plain(*this->gpu_, d, forcing, 0.5);
      EXPECT_EQ(plain.view().material, nullptr);
      DouglasStepper<T> cs(*this->cpu_, d, forcing, 0.5);
      EXPECT_EQ(cs.view().material, nullptr);
    }
    Norms gn{}, cn{};
    EXPECT_LE(this->stepper_difference(d, forcing, CudaPolicy{}, 4, &gn, &cn), 20 * tolerance<T>())
        << describe(bc, {37, 21, 18}, true);
    EXPECT_NEAR(gn.sum_squares, cn.sum_squares, 1e3 * tolerance<T>() * cn.sum_squares);
  }
}

TYPED_TEST(CudaDouglas, ResidualMatchesCpu) {
  const BoundarySpec bc = boundary_mix(BoundaryKind::neumann, BoundaryKind::periodic,
                                       BoundaryKind::neumann);
  const Diffusion<TypeParam> d = make_diffusion<TypeParam>({29, 12, 31}, bc, true, this->rng_);
  const SmoothForcing<TypeParam> forcing(d.grid, 3);
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
