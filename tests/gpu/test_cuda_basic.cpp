// CUDA backend basics: creation and errors, transfers, fill, axpy, the diagonal scalings,
// set_face, the tangential factors of face arrays and the norm, dot and plane reductions,
// each against the CPU backend.
#include "gpu_test_support.hpp"
#include "solvers/bench/sanitizer_probes.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/poison.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace adi3d::test {
namespace {

template <class T>
using CudaBasic = CudaTest<T>;
TYPED_TEST_SUITE(CudaBasic, Precisions);

TYPED_TEST(CudaBasic, CreatesBackendOnDeviceZero) {
  EXPECT_EQ(this->gpu_->kind(), BackendKind::cuda);
  EXPECT_NE(this->gpu_->description().find("cuda device 0"), std::string::npos);
  EXPECT_TRUE(cuda_compiled());
  const CudaPolicy p = cuda_policy(*this->gpu_);
  EXPECT_EQ(p.stencil, StencilVariant::planes);
  EXPECT_EQ(p.x_solve, XSolveVariant::warp_lines);
  EXPECT_TRUE(p.yz_tiles);
}

// The kernels that stream planes by sm_90 bulk copies run exactly where the device has
// them and the build compiled them for it (ADI3D_BUILD_HAS_SM90: CMAKE_CUDA_ARCHITECTURES
// holds 90 or newer, and ADI3D_BULK_COPIES is not off); elsewhere the shuffle stencil and
// the cp.async x pass stand in.
TYPED_TEST(CudaBasic, BulkCopyKernelsFollowDeviceAndBuild) {
  const std::string d = this->gpu_->description();
  const std::size_t at = d.find("sm_");
  ASSERT_NE(at, std::string::npos) << d;
  const int major = std::stoi(d.substr(at + 3)) / 10;
  const bool usable = bulk_copy_kernels_usable(*this->gpu_);
  const char* switched = std::getenv("ADI3D_BULK_COPIES");
  if (switched && std::string(switched) == "off")
    EXPECT_FALSE(usable) << d << ": ADI3D_BULK_COPIES=off";
  else if (major < 9)
    EXPECT_FALSE(usable) << d;
  else if (ADI3D_BUILD_HAS_SM90)
    EXPECT_TRUE(usable) << d;
  else
    EXPECT_FALSE(usable) << d << ": a build without sm_90 code must not run the bulk-copy kernels";
}

// The backend says which variant ran, for labels (adi3d bench gpu): the default policy's
// planes stencil (where the device runs bulk copies; with an alpha field too) and
// warp_lines x solve (a warp per line, with an alpha field too), and the policy's own
// variant where it takes the work.
TYPED_TEST(CudaBasic, ReportsTheVariantsThatRan) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::dirichlet);
  const std::array<int, 3> n{32, 9, 7};  // x rows of whole 16-byte units: the planes stencil applies
  for (bool field : {false, true}) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, field, this->rng_);
    Array<T> alpha;
    if (field) alpha = this->to_gpu(d.alpha_field);
    const OperatorView<T> op = make_operator_view(d, field ? alpha.data() : nullptr);
    Array<T> u = this->to_gpu(random_field<T>(d.grid.size(), this->rng_));
    Array<T> r = this->gpu_->allocate(d.grid.size());
    set_cuda_policy(*this->gpu_, CudaPolicy{});
    this->gpu_->operator_rhs(op, u.data(), nullptr, FaceData<T>{}, T(1), r.data());
    this->gpu_->solve_lines(op, 0, T(1e-3), r.data());
    const bool planes = bulk_copy_kernels_usable(*this->gpu_);
    EXPECT_EQ(last_stencil_variant(*this->gpu_), planes ? StencilVariant::planes : StencilVariant::shuffle) << field;
    EXPECT_EQ(last_x_solve_variant(*this->gpu_), XSolveVariant::warp_lines) << field;
    set_stencil_variant(*this->gpu_, StencilVariant::zpencil);
    set_x_solve_variant(*this->gpu_, XSolveVariant::pcr_thomas);
    this->gpu_->operator_rhs(op, u.data(), nullptr, FaceData<T>{}, T(1), r.data());
    this->gpu_->solve_lines(op, 0, T(1e-3), r.data());
    EXPECT_EQ(last_stencil_variant(*this->gpu_), StencilVariant::zpencil) << field;
    EXPECT_EQ(last_x_solve_variant(*this->gpu_), XSolveVariant::pcr_thomas) << field;
  }
}

TYPED_TEST(CudaBasic, MissingDeviceThrowsBackendUnavailable) {
  try {
    make_cuda_backend<TypeParam>(cuda_device_count() + 7);
    FAIL() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("requested"), std::string::npos) << e.what();
  }
}

TYPED_TEST(CudaBasic, VariantSettersRejectCpuBackend) {
  EXPECT_THROW(set_stencil_variant(*this->cpu_, StencilVariant::naive), BackendUnavailable);
}

TYPED_TEST(CudaBasic, HugeAllocationNamesSizes) {
  try {
    this->gpu_->allocate(std::size_t(1) << 46);  // hundreds of TiB
    FAIL() << "expected an allocation failure";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("GiB free"), std::string::npos) << e.what();
  }
  // The failure must not poison later work.
  Array<TypeParam> a = this->gpu_->allocate(10);
  this->gpu_->fill(a.data(), TypeParam(2), 10);
  EXPECT_EQ(this->from_gpu(a)[9], TypeParam(2));
}

TYPED_TEST(CudaBasic, EstimateBytesCountsFieldsAndScratch) {
  Grid3 g;
  g.n = {10, 20, 30};
  EXPECT_EQ(estimate_bytes(g, 3, sizeof(TypeParam)), 5u * 6000u * sizeof(TypeParam));
}

TYPED_TEST(CudaBasic, UploadDownloadRoundTrip) {
  const auto host = random_field<TypeParam>(12347, this->rng_);
  Array<TypeParam> a = this->to_gpu(host);
  EXPECT_EQ(this->from_gpu(a), host);
}

TYPED_TEST(CudaBasic, FillMatchesCpu) {
  for (std::size_t n : {std::size_t(1), std::size_t(255), std::size_t(1000001)}) {
    Array<TypeParam> a = this->gpu_->allocate(n);
    this->gpu_->fill(a.data(), TypeParam(-3.25), n);
    const auto got = this->from_gpu(a);
    for (TypeParam v : got) ASSERT_EQ(v, TypeParam(-3.25)) << "n = " << n;
  }
}

TYPED_TEST(CudaBasic, AxpyMatchesCpu) {
  const std::size_t n = 300007;
  const auto x = random_field<TypeParam>(n, this->rng_);
  const auto y = random_field<TypeParam>(n, this->rng_);
  Array<TypeParam> gx = this->to_gpu(x), gy = this->to_gpu(y);
  Array<TypeParam> cx = this->to_cpu(x), cy = this->to_cpu(y);
  this->gpu_->axpy(TypeParam(0.75), gx.data(), gy.data(), n);
  this->cpu_->axpy(TypeParam(0.75), cx.data(), cy.data(), n);
  EXPECT_LE(relative_difference(this->from_cpu(cy), this->from_gpu(gy)), tolerance<TypeParam>());
}

// Across precisions (mixed-precision Poisson): x from a backend of the other precision on
// the same device. In double, rounded once: a lone product (b = 0) is the CPU's to the bit;
// with b = 1 the GPU may contract to an FMA.
TYPED_TEST(CudaBasic, AxpbyConvertedMatchesCpu) {
  using T = TypeParam;
  using U = OtherPrecision<T>;
  const std::size_t n = 100003;
  const auto x = random_field<U>(n, this->rng_);
  const auto y = random_field<T>(n, this->rng_);
  const auto gpu_other = make_cuda_backend<U>(0);
  Array<U> gx = gpu_other->allocate(n);
  gpu_other->upload(x.data(), gx.data(), n);
  gpu_other->synchronize();
  for (const double b : {0.0, 1.0}) {
    Array<T> gy = this->to_gpu(y);
    std::vector<T> cy = y;
    this->gpu_->axpby_converted(-0.3125e-7, gx.data(), b, gy.data(), n);
    this->cpu_->axpby_converted(-0.3125e-7, x.data(), b, cy.data(), n);
    if (b == 0) {
      EXPECT_EQ(this->from_gpu(gy), cy);
    } else {
      EXPECT_LE(relative_difference(cy, this->from_gpu(gy)), tolerance<T>());
    }
  }
}

// The sum in double, rounded once: the same bits as the CPU's loop.
TYPED_TEST(CudaBasic, AddConstantMatchesCpu) {
  const std::size_t n = 100003;
  const auto x = random_field<TypeParam>(n, this->rng_);
  Array<TypeParam> gx = this->to_gpu(x), cx = this->to_cpu(x);
  this->gpu_->add_constant(gx.data(), -1.234567890123e-3, n);
  this->cpu_->add_constant(cx.data(), -1.234567890123e-3, n);
  const auto added = this->from_cpu(cx);
  EXPECT_EQ(this->from_gpu(gx), added);
  EXPECT_NE(added, x);
}

TYPED_TEST(CudaBasic, DifferenceNormsMatchCpu) {
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(2000003)}) {
    const auto x = random_field<TypeParam>(n, this->rng_);
    const auto y = random_field<TypeParam>(n, this->rng_);
    Array<TypeParam> gx = this->to_gpu(x), gy = this->to_gpu(y);
    Array<TypeParam> cx = this->to_cpu(x), cy = this->to_cpu(y);
    for (bool with_y : {true, false}) {
      const Norms g = this->gpu_->difference_norms(gx.data(), with_y ? gy.data() : nullptr, n);
      const Norms c = this->cpu_->difference_norms(cx.data(), with_y ? cy.data() : nullptr, n);
      EXPECT_NEAR(g.sum_squares, c.sum_squares, 1e-12 * c.sum_squares + 1e-300) << n;
      EXPECT_EQ(g.max_abs, c.max_abs) << n;
      EXPECT_NEAR(g.sum, c.sum, 1e-12 * std::sqrt(c.sum_squares) * std::sqrt(double(n))) << n;
      EXPECT_NEAR(g.sum_abs, c.sum_abs, 1e-12 * c.sum_abs) << n;
    }
  }
}

// The Krylov solve's inner products: the same reduction as the norms, in double.
TYPED_TEST(CudaBasic, DotMatchesCpu) {
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(2000003)}) {
    const auto x = random_field<TypeParam>(n, this->rng_);
    const auto y = random_field<TypeParam>(n, this->rng_);
    Array<TypeParam> gx = this->to_gpu(x), gy = this->to_gpu(y);
    Array<TypeParam> cx = this->to_cpu(x), cy = this->to_cpu(y);
    const double g = this->gpu_->dot(gx.data(), gy.data(), n), c = this->cpu_->dot(cx.data(), cy.data(), n);
    const Norms scale = this->cpu_->difference_norms(cx.data(), nullptr, n);
    EXPECT_NEAR(g, c, 1e-12 * scale.sum_squares + 1e-300) << n;
    EXPECT_EQ(this->gpu_->dot(gx.data(), gy.data(), 0), 0.0);
  }
}

// The Krylov preconditioner's diagonal scaling: one rounded product a value, the CPU's bits.
TYPED_TEST(CudaBasic, MultiplyMatchesCpu) {
  const std::size_t n = 300007;
  const auto s = random_field<TypeParam>(n, this->rng_);
  const auto x = random_field<TypeParam>(n, this->rng_);
  Array<TypeParam> gs = this->to_gpu(s), gx = this->to_gpu(x), cs = this->to_cpu(s), cx = this->to_cpu(x);
  this->gpu_->multiply(gs.data(), gx.data(), n);
  this->cpu_->multiply(cs.data(), cx.data(), n);
  const auto product = this->from_cpu(cx);
  EXPECT_EQ(this->from_gpu(gx), product);
  EXPECT_NE(product, x);
}

// sqrt(layer / alpha) plane by plane (a positive alpha field), correctly rounded on both.
TYPED_TEST(CudaBasic, LayerScalingMatchesCpu) {
  using T = TypeParam;
  const std::size_t plane = 1237, planes = 53, n = plane * planes;
  const auto alpha = random_field<T>(n, this->rng_, 0.5, 2.5);
  std::vector<T> layers(planes);
  for (std::size_t k = 0; k < planes; ++k) layers[k] = T(0.25) + T(k);
  Array<T> ga = this->to_gpu(alpha), ca = this->to_cpu(alpha);
  Array<T> gs = this->gpu_->allocate(n), cs = this->cpu_->allocate(n);
  this->gpu_->layer_scaling(ga.data(), layers, plane, gs.data());
  this->cpu_->layer_scaling(ca.data(), layers, plane, cs.data());
  const auto expected = this->from_cpu(cs);
  EXPECT_EQ(this->from_gpu(gs), expected);
  EXPECT_EQ(expected[5 * plane + 7], std::sqrt(layers[5] / alpha[5 * plane + 7]));
}

// The largest ratio of neighbours' alpha along x and y: a max, so the CPU's to the bit.
TYPED_TEST(CudaBasic, InPlaneJumpMatchesCpu) {
  using T = TypeParam;
  for (const std::array<int, 3> n : {std::array<int, 3>{1, 1, 3}, std::array<int, 3>{37, 29, 11},
                                     std::array<int, 3>{257, 130, 9}}) {
    const std::size_t size = static_cast<std::size_t>(n[0]) * n[1] * n[2];
    auto alpha = random_field<T>(size, this->rng_, 1.0, 1.5);
    Array<T> ga = this->to_gpu(alpha), ca = this->to_cpu(alpha);
    const double expected = this->cpu_->in_plane_jump(ca.data(), n);
    EXPECT_EQ(this->gpu_->in_plane_jump(ga.data(), n), expected) << n[0] << " x " << n[1] << " x " << n[2];
    EXPECT_EQ(expected == 1.0, size == 3);
  }
}

// One reduction for all planes: each plane's sum as the norms' sum of that plane alone.
TYPED_TEST(CudaBasic, PlaneSumsMatchCpu) {
  for (const std::size_t plane : {std::size_t(1), std::size_t(255), std::size_t(66049)}) {
    const std::size_t planes = 67, n = plane * planes;
    const auto x = random_field<TypeParam>(n, this->rng_);
    Array<TypeParam> gx = this->to_gpu(x), cx = this->to_cpu(x);
    const std::vector<double> g = this->gpu_->plane_sums(gx.data(), plane, planes);
    const std::vector<double> c = this->cpu_->plane_sums(cx.data(), plane, planes);
    ASSERT_EQ(g.size(), planes);
    for (std::size_t k = 0; k < planes; ++k) {
      double scale = 0;
      for (std::size_t e = 0; e < plane; ++e) scale += std::abs(static_cast<double>(x[k * plane + e]));
      EXPECT_NEAR(g[k], c[k], 1e-14 * scale + 1e-300) << "plane " << k << " of " << plane;
    }
  }
  EXPECT_TRUE(this->gpu_->plane_sums(nullptr, 10, 0).empty());
}

// A NaN anywhere makes every norm NaN; the max reduction alone would have dropped it.
// (At 2000003 points the NaN lies in the kernel's unrolled loop, at 100003 past it.)
TYPED_TEST(CudaBasic, DifferenceNormsOfANanAreNan) {
  for (std::size_t n : {std::size_t(100003), std::size_t(2000003)}) {
    auto x = random_field<TypeParam>(n, this->rng_);
    x[n / 3] = std::numeric_limits<TypeParam>::quiet_NaN();
    Array<TypeParam> gx = this->to_gpu(x), cx = this->to_cpu(x);
    for (Backend<TypeParam>* b : {static_cast<Backend<TypeParam>*>(this->gpu_.get()),
                                  static_cast<Backend<TypeParam>*>(this->cpu_.get())}) {
      const Norms norms = b->difference_norms(b == this->gpu_.get() ? gx.data() : cx.data(), nullptr, n);
      EXPECT_TRUE(std::isnan(norms.max_abs)) << b->description() << " " << n;
      EXPECT_TRUE(std::isnan(norms.sum_squares)) << b->description() << " " << n;
      EXPECT_TRUE(std::isnan(norms.sum_abs)) << b->description() << " " << n;
    }
  }
}

TYPED_TEST(CudaBasic, DifferenceNormsAreReproducible) {
  const std::size_t n = 777777;
  const auto x = random_field<TypeParam>(n, this->rng_);
  Array<TypeParam> gx = this->to_gpu(x);
  const Norms a = this->gpu_->difference_norms(gx.data(), nullptr, n);
  for (int rep = 0; rep < 5; ++rep) {
    const Norms b = this->gpu_->difference_norms(gx.data(), nullptr, n);
    EXPECT_EQ(a.sum_squares, b.sum_squares);
    EXPECT_EQ(a.sum, b.sum);
    EXPECT_EQ(a.max_abs, b.max_abs);
    EXPECT_EQ(a.sum_abs, b.sum_abs);
  }
}

TYPED_TEST(CudaBasic, SetFaceMatchesCpuOnEveryFace) {
  Grid3 g;
  g.n = {37, 5, 11};
  const auto base = random_field<TypeParam>(g.size(), this->rng_);
  Array<TypeParam> gf = this->to_gpu(base), cf = this->to_cpu(base);
  for (int face = 0; face < 6; ++face) {
    const auto values = random_field<TypeParam>(face_size(g, face), this->rng_);
    Array<TypeParam> gv = this->to_gpu(values), cv = this->to_cpu(values);
    this->gpu_->set_face(g, face, gv.data(), gf.data());
    this->cpu_->set_face(g, face, cv.data(), cf.data());
  }
  EXPECT_EQ(this->from_gpu(gf), this->from_cpu(cf));
}

// Each face in turn, so that edges and corners take the products of their faces' factors.
TYPED_TEST(CudaBasic, ScaleFaceMatchesCpuOnEveryFace) {
  Grid3 g;
  g.n = {37, 5, 11};
  const auto base = random_field<TypeParam>(g.size(), this->rng_);
  Array<TypeParam> gf = this->to_gpu(base), cf = this->to_cpu(base);
  for (int face = 0; face < 6; ++face) {
    const auto factor = static_cast<TypeParam>(0.5 + 0.25 * face);
    this->gpu_->scale_face(g, face, factor, gf.data());
    this->cpu_->scale_face(g, face, factor, cf.data());
  }
  const auto scaled = this->from_cpu(cf);
  EXPECT_EQ(this->from_gpu(gf), scaled);
  EXPECT_EQ(scaled[g.index(5, 2, 5)], base[g.index(5, 2, 5)]);  // inside: untouched
  EXPECT_EQ(scaled[g.index(0, 0, 0)], base[g.index(0, 0, 0)] * TypeParam(0.5) * TypeParam(1.0) * TypeParam(1.5));
}

TYPED_TEST(CudaBasic, FaceTangentialFactorMatchesCpu) {
  using T = TypeParam;
  const std::array<int, 3> n{13, 9, 7};
  for (const BoundarySpec& bc : all_face_mixes())
    for (bool variable : {false, true}) {
      const Diffusion<T> d = make_diffusion<T>(n, bc, variable, this->rng_);
      Array<T> galpha, calpha;
      if (variable) {
        galpha = this->to_gpu(d.alpha_field);
        calpha = this->to_cpu(d.alpha_field);
      }
      const OperatorView<T> gop = make_operator_view(d, variable ? galpha.data() : nullptr);
      const OperatorView<T> cop = make_operator_view(d, variable ? calpha.data() : nullptr);
      for (int face = 0; face < 6; ++face) {
        const FaceAxes fa = face_axes(face);
        const auto w = random_field<T>(face_size(d.grid, face), this->rng_);
        Array<T> gw = this->to_gpu(w), cw = this->to_cpu(w);
        for (int axis : {fa.u, fa.v}) {
          Array<T> gout = this->gpu_->allocate(w.size()), cout = this->cpu_->allocate(w.size());
          this->gpu_->face_tangential_factor(gop, face, axis, T(0.01), gw.data(), gout.data());
          this->cpu_->face_tangential_factor(cop, face, axis, T(0.01), cw.data(), cout.data());
          const auto ref = this->from_cpu(cout);
          ASSERT_LE(relative_difference(ref, this->from_gpu(gout)), tolerance<T>())
              << describe(bc, n, variable) << " face " << face << " axis " << axis;
          ASSERT_NE(ref, w) << "the factor must change an interior row";
        }
      }
    }
}

TYPED_TEST(CudaBasic, ZeroSizedOperationsDoNothing) {
  Array<TypeParam> a = this->gpu_->allocate(0);
  EXPECT_TRUE(a.empty());
  this->gpu_->fill(a.data(), TypeParam(1), 0);
  this->gpu_->axpy(TypeParam(1), a.data(), a.data(), 0);
  const Norms n = this->gpu_->difference_norms(a.data(), nullptr, 0);
  EXPECT_EQ(n.sum_squares, 0.0);
}


// The ADI3D_POISON test switch (solvers/poison.hpp) on the device: arrays and pinned
// staging buffers arrive filled with the pattern, so that the GPU suites run under the
// switch (scripts/gpu-check) test what they claim. Skipped when the switch is off.
TYPED_TEST(CudaBasic, PoisonSwitchFillsDeviceArraysAndStaging) {
  using T = TypeParam;
  const Poison setting = poison_setting();
  if (setting == Poison::off) GTEST_SKIP() << "ADI3D_POISON is not set (scripts/gpu-check sets it)";
  const std::size_t n = 4099;
  Array<T> device = this->gpu_->allocate(n);
  std::vector<T> host(n);
  this->gpu_->download(device.data(), host.data(), n);
  Array<T> staging = this->gpu_->allocate_host_staging(n);
  for (const T* values : {static_cast<const T*>(host.data()), static_cast<const T*>(staging.data())}) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values);
    for (std::size_t b = 0; b < n * sizeof(T); ++b) ASSERT_EQ(bytes[b], poison_byte(setting)) << "byte " << b;
  }
}

// Bulk stores (the planes stencil's and the fused steps' way of writing rows) reach global
// memory where the next kernel reads them with ordinary loads. Also the probe that
// scripts/gpu-check runs under initcheck alone, to record whether the tool follows them.
TYPED_TEST(CudaBasic, BulkStoresAreReadBackByOrdinaryLoads) {
  if (!bulk_copy_kernels_usable(*this->gpu_)) GTEST_SKIP() << "no bulk copies here: " << this->gpu_->description();
  EXPECT_TRUE(cuda::bulk_store_round_trip(0));
}

}  // namespace
}  // namespace adi3d::test
