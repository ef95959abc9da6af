// The reference steps of `adi3d bench adi`: one cuSPARSE Douglas step against our
// DouglasStepper step (CUDA backend, fused path) and FTCS against a serial CPU loop over
// the shared point rules, on random data, odd and non-cubic sizes, float and double.
#include "gpu_test_support.hpp"
#include "solvers/bench/adi_bench.hpp"
#include "solvers/discretization.hpp"
#include "solvers/douglas_step.hpp"

#include <stdexcept>

namespace adi3d::test {
namespace {

const std::array<int, 3> kSizes[] = {{67, 35, 19}, {3, 3, 3}, {33, 4, 65}, {64, 64, 64}};

template <class T>
class AdiBenchSteps : public CudaTest<T> {};
TYPED_TEST_SUITE(AdiBenchSteps, Precisions);

// Largest |a - b| over the largest |a - base|: the difference relative to the update.
template <class T>
double relative_to_update(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& base) {
  double diff = 0, update = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    if (std::isnan(static_cast<double>(b[e]))) return std::numeric_limits<double>::infinity();
    diff = std::max(diff, std::fabs(static_cast<double>(a[e]) - static_cast<double>(b[e])));
    update = std::max(update, std::fabs(static_cast<double>(a[e]) - static_cast<double>(base[e])));
  }
  return diff / update;
}

TYPED_TEST(AdiBenchSteps, CusparseStepMatchesDouglasStepper) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::dirichlet);
  for (const auto& n : kSizes) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
    const auto u0 = random_field<T>(d.grid.size(), this->rng_, 0.5, 1.5);
    ZeroForcing<T> forcing;
    const double dt = 0.5 * d.grid.h[0];
    DouglasStepper<T> stepper(*this->gpu_, d, forcing, 0.5);
    cuda::CusparseDouglasStep<T> cusparse(*this->gpu_, d, dt, 0.5);
    Array<T> ours = this->to_gpu(u0), theirs = this->to_gpu(u0);
    stepper.step(ours.data(), 0.0, dt);
    cusparse.step(theirs.data());
    const double rel = relative_to_update(this->from_gpu(ours), this->from_gpu(theirs), u0);
    EXPECT_LE(rel, (std::is_same<T, float>::value ? 1e-5 : 1e-12)) << describe(bc, n, false);
    // A second step: the coefficient arrays cuSPARSE overwrites were formed again.
    stepper.step(ours.data(), dt, dt);
    cusparse.step(theirs.data());
    EXPECT_LE(relative_to_update(this->from_gpu(ours), this->from_gpu(theirs), u0),
              (std::is_same<T, float>::value ? 2e-5 : 2e-12))
        << describe(bc, n, false) << ", second step";
  }
}

// The per-plane y solve (bench comparison only) against the CPU backend's y lines.
TYPED_TEST(AdiBenchSteps, CusparsePerPlaneYMatchesCpuLines) {
  using T = TypeParam;
  for (const auto& n : kSizes) {
    const Diffusion<T> d = make_diffusion<T>(n, BoundarySpec{}, false, this->rng_);
    const double dt = 0.5 * d.grid.h[0];
    cuda::CusparseDouglasStep<T> cusparse(*this->gpu_, d, dt, 0.5);
    const auto rhs = random_field<T>(d.grid.size(), this->rng_);
    Array<T> g = this->to_gpu(rhs), c = this->to_cpu(rhs);
    for (int twice = 0; twice < 2; ++twice) {  // the second call sees re-formed coefficients
      cusparse.solve_y_per_plane(g.data());
      this->cpu_->solve_lines(make_operator_view(d, nullptr), 1, static_cast<T>(0.5 * dt), c.data());
    }
    EXPECT_LE(relative_difference(this->from_cpu(c), this->from_gpu(g)), tolerance<T>())
        << describe(BoundarySpec{}, n, false);
  }
}

TYPED_TEST(AdiBenchSteps, CusparseStepDeclinesOtherProblems) {
  using T = TypeParam;
  const Diffusion<T> neumann = make_diffusion<T>({9, 9, 9}, boundary_mix(BoundaryKind::neumann, BoundaryKind::dirichlet,
                                                                         BoundaryKind::dirichlet),
                                                 false, this->rng_);
  EXPECT_THROW(cuda::CusparseDouglasStep<T>(*this->gpu_, neumann, 1e-3, 0.5), std::invalid_argument);
  const Diffusion<T> variable = make_diffusion<T>({9, 9, 9}, BoundarySpec{}, true, this->rng_);
  EXPECT_THROW(cuda::FtcsStep<T>(*this->gpu_, variable, 1e-3), std::invalid_argument);
}

// Serial oracle: u + dt A u at unknown nodes (apply_operator), u on Dirichlet nodes.
template <class T>
std::vector<T> ftcs_reference(const Diffusion<T>& d, const std::vector<T>& u, T dt) {
  const OperatorView<T> op = make_operator_view(d, nullptr);
  std::vector<T> out(u.size());
  for (int k = 0; k < d.grid.n[2]; ++k)
    for (int j = 0; j < d.grid.n[1]; ++j)
      for (int i = 0; i < d.grid.n[0]; ++i) {
        const std::size_t p = d.grid.index(i, j, k);
        out[p] = is_dirichlet_node(op, i, j, k) ? u[p] : u[p] + dt * apply_operator(op, u.data(), i, j, k);
      }
  return out;
}

TYPED_TEST(AdiBenchSteps, FtcsMatchesCpuReference) {
  using T = TypeParam;
  for (const auto& n : kSizes) {
    const Diffusion<T> d = make_diffusion<T>(n, BoundarySpec{}, false, this->rng_);
    const double dt = cuda::FtcsStep<T>::stable_dt(d);
    std::vector<T> ref = random_field<T>(d.grid.size(), this->rng_, 0.5, 1.5);
    const std::vector<T> u0 = ref;
    cuda::FtcsStep<T> ftcs(*this->gpu_, d, dt);
    Array<T> a = this->to_gpu(ref), b = this->to_gpu(ref);
    for (int step = 0; step < 4; ++step) {  // ping-pong a -> b -> a ...
      ftcs.step(step % 2 == 0 ? a.data() : b.data(), step % 2 == 0 ? b.data() : a.data());
      ref = ftcs_reference(d, ref, static_cast<T>(dt));
    }
    EXPECT_LE(relative_to_update(ref, this->from_gpu(a), u0), (std::is_same<T, float>::value ? 1e-5 : 1e-12))
        << describe(BoundarySpec{}, n, false);
  }
}

}  // namespace
}  // namespace adi3d::test
