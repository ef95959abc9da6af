// Robin (convective) faces on the CUDA backend against the CPU backend: line solves of
// every x variant and of the y/z paths with a constant h (shared factors) and an h field
// (each line its own end row), constant alpha, alpha fields and material indices; and
// whole steps, where a constant h over constant alpha and any h over an alpha field (or
// its material index) keep the fused step, and an h field over constant alpha steps
// operation by operation.
#include "gpu_test_support.hpp"

#include <array>
#include <string>
#include <vector>

namespace adi3d::test {
namespace {

// Smooth data on every face, moving in time on the Robin faces (u_inf) only (moving
// Dirichlet data would keep the step unfused), and h per face: constant (h_field false)
// or varying over the face and in time.
template <class T>
class RobinForcing final : public Forcing<T> {
 public:
  RobinForcing(const Grid3& g, const BoundarySpec& bc, bool h_field) : smooth_(g, 1), g_(g), bc_(bc), h_field_(h_field) {}
  bool has_source() const override { return true; }
  bool source_depends_on_time() const override { return true; }
  void source(double t, T* v) const override { smooth_.source(t, v); }
  bool boundary_depends_on_time(int face) const override { return bc_.face[face] == BoundaryKind::robin; }
  bool boundary_is_zero(int) const override { return false; }
  void boundary(int face, double t, T* v) const override {
    smooth_.boundary(face, boundary_depends_on_time(face) ? t : 0, v);
  }
  std::optional<double> robin_h_constant(int face) const override {
    if (h_field_) return std::nullopt;
    return 0.5 + 3.0 * face;
  }
  bool robin_h_depends_on_time(int) const override { return h_field_; }
  void robin_h(int face, double t, T* v) const override {
    const FaceAxes fa = face_axes(face);
    for (int b = 0; b < g_.n[fa.v]; ++b)
      for (int a = 0; a < g_.n[fa.u]; ++a)
        v[a + static_cast<std::size_t>(g_.n[fa.u]) * b] = static_cast<T>(1 + face + 20 * (a % 3) + b * (1 + t));
  }

 private:
  SmoothForcing<T> smooth_;
  Grid3 g_;
  BoundarySpec bc_;
  bool h_field_;
};

// The diffusivity: constant, a random field, or a field of four materials (whose kernels
// read the material index).
enum class Alpha { constant, field, materials };
const char* to_string(Alpha a) { return a == Alpha::constant ? "constant" : a == Alpha::field ? "field" : "materials"; }
constexpr Alpha kAlphas[] = {Alpha::constant, Alpha::field, Alpha::materials};

template <class T>
class CudaRobin : public CudaTest<T> {
 protected:
  Diffusion<T> diffusion(std::array<int, 3> n, const BoundarySpec& bc, Alpha alpha) {
    Diffusion<T> d = make_diffusion<T>(n, bc, alpha != Alpha::constant, this->rng_);
    if (alpha == Alpha::materials) this->make_four_materials(d.alpha_field);
    return d;
  }
  // solve_lines along axis on both backends, every face Robin: a constant h on the lower
  // faces, and on the upper ones a constant too or a random field.
  double compare_lines(int axis, std::array<int, 3> n, Alpha alpha, bool h_field) {
    BoundarySpec bc = boundary_mix(BoundaryKind::robin, BoundaryKind::robin, BoundaryKind::robin);
    const Diffusion<T> d = diffusion(n, bc, alpha);
    const bool alpha_field = alpha != Alpha::constant;
    const auto rhs = random_field<T>(d.grid.size(), this->rng_);
    Array<T> gd = this->to_gpu(rhs), cd = this->to_cpu(rhs), galpha, calpha;
    if (alpha_field) {
      galpha = this->to_gpu(d.alpha_field);
      calpha = this->to_cpu(d.alpha_field);
    }
    OperatorView<T> gop = make_operator_view(d, alpha_field ? galpha.data() : nullptr);
    OperatorView<T> cop = make_operator_view(d, alpha_field ? calpha.data() : nullptr);
    MaterialArrays<T> materials;
    if (alpha == Alpha::materials) materials = this->attach_material_index(gop, d.alpha_field, n);
    std::array<Array<T>, 6> gh, ch;
    for (int f = 0; f < 6; ++f) {
      if (f % 2 == 0 || !h_field) {
        gop.robin_h[f] = cop.robin_h[f] = static_cast<T>(0.5 + 7 * f);
        continue;
      }
      const auto h = random_field<T>(face_size(d.grid, f), this->rng_, 0.0, 60.0);
      gh[f] = this->to_gpu(h);
      ch[f] = this->to_cpu(h);
      gop.robin_h_field[f] = gh[f].data();
      cop.robin_h_field[f] = ch[f].data();
    }
    const T tau = T(4) / gop.inv_h2[axis];
    this->gpu_->solve_lines(gop, axis, tau, gd.data());
    this->cpu_->solve_lines(cop, axis, tau, cd.data());
    return relative_difference(this->from_cpu(cd), this->from_gpu(gd));
  }
};
TYPED_TEST_SUITE(CudaRobin, Precisions);

CudaPolicy with_x(XSolveVariant v) {
  CudaPolicy p;
  p.x_solve = v;
  return p;
}

// Every x variant, and the y/z lines by tiles, by per-thread Thomas with shared factors,
// and with global scratch.
std::vector<CudaPolicy> line_policies() {
  std::vector<CudaPolicy> out;
  for (XSolveVariant x : {XSolveVariant::pcr_thomas, XSolveVariant::thread_thomas, XSolveVariant::register_cr,
                          XSolveVariant::cusparse, XSolveVariant::tridiag, XSolveVariant::warp_lines})
    out.push_back(with_x(x));
  CudaPolicy thomas;
  thomas.yz_tiles = false;
  out.push_back(thomas);
  thomas.constant_coefficients = false;
  thomas.yz_scratch = LineScratch::global;
  out.push_back(thomas);
  return out;
}

TYPED_TEST(CudaRobin, LineSolvesMatchCpu) {
  for (const CudaPolicy& policy : line_policies()) {
    const XSolveVariant x = policy.x_solve;
    set_cuda_policy(*this->gpu_, policy);
    for (const std::array<int, 3>& n : {std::array<int, 3>{67, 35, 19}, std::array<int, 3>{3, 4, 5}})
      for (Alpha alpha : kAlphas)
        for (bool h_field : {false, true})
          for (int axis = 0; axis < 3; ++axis)
            ASSERT_LE(this->compare_lines(axis, n, alpha, h_field), tolerance<TypeParam>())
                << to_string(x) << " tiles " << policy.yz_tiles << " axis " << axis << " alpha " << to_string(alpha)
                << " h field " << h_field << " n " << n[0] << "x" << n[1] << "x" << n[2];
  }
}

// Robin faces with Dirichlet and Neumann ones: the stepper on both backends. A constant h
// over constant alpha, and any h over an alpha field or its material index, take the fused
// step on every step (the flux from u folded into the source each step; the end rows'
// Robin terms in the shared factors, or in each line's rows); an h field over constant
// alpha steps operation by operation. 64 x 20 x 24: the alpha field's one-kernel x pass
// (rows of 16-byte multiples); 37 x 29 x 41: its stencil and warp-per-line x solve.
TYPED_TEST(CudaRobin, StepsMatchCpu) {
  using T = TypeParam;
  for (bool x_robin : {true, false}) {
    BoundarySpec bc = boundary_mix(BoundaryKind::robin, BoundaryKind::robin, BoundaryKind::robin);
    bc.face[face_index(1, 0)] = BoundaryKind::dirichlet;
    bc.face[face_index(2, 0)] = BoundaryKind::neumann;
    if (!x_robin) bc.face[face_index(0, 0)] = bc.face[face_index(0, 1)] = BoundaryKind::dirichlet;
    for (const auto& n : {std::array<int, 3>{37, 29, 41}, std::array<int, 3>{64, 20, 24}})
      for (Alpha alpha : kAlphas)
        for (bool h_field : {false, true}) {
          const Diffusion<T> d = this->diffusion(n, bc, alpha);
          const RobinForcing<T> forcing(d.grid, bc, h_field);
          const std::string what = describe(bc, n, alpha != Alpha::constant) + " alpha " + to_string(alpha) +
                                   (h_field ? " h field" : " constant h");
          EXPECT_LE(this->stepper_difference(d, forcing, CudaPolicy{}, 5), 20 * tolerance<T>()) << what;
          Array<T> u = this->to_gpu(random_field<T>(d.grid.size(), this->rng_));
          DouglasStepper<T> stepper(*this->gpu_, d, forcing, 0.5);
          stepper.initialize(u.data(), 0.0);
          for (int step = 0; step < 3; ++step) stepper.step(u.data(), step * 2e-3, 2e-3);
          EXPECT_EQ(stepper.fused_steps(), alpha == Alpha::constant && h_field ? 0 : 3) << what;
        }
  }
}

}  // namespace
}  // namespace adi3d::test
