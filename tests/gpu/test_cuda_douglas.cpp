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
