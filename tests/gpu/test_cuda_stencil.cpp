// operator_rhs on the CUDA backend, every stencil variant against the CPU backend: every
// lo/hi boundary combination, Neumann face data, sources, variable alpha, odd and tiny
// grids (partial warps and tiles, single-chunk and multi-chunk z pencils).
#include "gpu_test_support.hpp"
#include "solvers/face_layout.hpp"

#include <chrono>
#include <cstdio>

namespace adi3d::test {
namespace {

template <class T>
class CudaStencil : public CudaTest<T> {
 protected:
  // The same random Neumann data on both backends, on every Neumann face of bc but y+
  // (null data means zero flux there).
  struct NeumannData {
    std::array<Array<T>, 6> gpu_arrays, cpu_arrays;
    FaceData<T> gpu{}, cpu{};
  };
  NeumannData random_neumann_data(const Grid3& g, const BoundarySpec& bc) {
    NeumannData data;
    for (int face = 0; face < 6; ++face) {
      if (bc.face[face] != BoundaryKind::neumann || face == 3) continue;
      const auto values = random_field<T>(face_size(g, face), this->rng_);
      data.gpu_arrays[face] = this->to_gpu(values);
      data.cpu_arrays[face] = this->to_cpu(values);
      data.gpu[face] = data.gpu_arrays[face].data();
      data.cpu[face] = data.cpu_arrays[face].data();
    }
    return data;
  }

  // Runs operator_rhs on both backends for one case; returns the relative difference.
  // by_material: the alpha field takes 4 values, and the GPU reads it by its material
  // index (as DouglasStepper keeps it), the CPU from the field.
  double compare(StencilVariant variant, std::array<int, 3> n, const BoundarySpec& bc,
                 bool variable_alpha, bool with_source, T scale, bool by_material = false) {
    Diffusion<T> d = make_diffusion<T>(n, bc, variable_alpha, this->rng_);
    if (by_material) {
      this->make_four_materials(d.alpha_field);
    }
    const std::size_t size = d.grid.size();
    const auto u = random_field<T>(size, this->rng_);
    const auto f = random_field<T>(size, this->rng_);
    Array<T> gu = this->to_gpu(u), cu = this->to_cpu(u);
    Array<T> gf = this->to_gpu(f), cf = this->to_cpu(f);
    Array<T> galpha, calpha;
    if (variable_alpha) {
      galpha = this->to_gpu(d.alpha_field);
      calpha = this->to_cpu(d.alpha_field);
    }
    const NeumannData data = random_neumann_data(d.grid, bc);
    const FaceData<T>&gface = data.gpu, &cface = data.cpu;
    OperatorView<T> gop = make_operator_view(d, variable_alpha ? galpha.data() : nullptr);
    MaterialArrays<T> materials;
    if (by_material) materials = this->attach_material_index(gop, d.alpha_field, n);
    const OperatorView<T> cop = make_operator_view(d, variable_alpha ? calpha.data() : nullptr);
    Array<T> gr = this->gpu_->allocate(size), cr = this->cpu_->allocate(size);
    this->gpu_->fill(gr.data(), T(99), size);  // every entry must be written
    set_stencil_variant(*this->gpu_, variant);
    this->gpu_->operator_rhs(gop, gu.data(), with_source ? gf.data() : nullptr, gface, scale,
                             gr.data());
    this->cpu_->operator_rhs(cop, cu.data(), with_source ? cf.data() : nullptr, cface, scale,
                             cr.data());
    return relative_difference(this->from_cpu(cr), this->from_gpu(gr));
  }

  void check_variant(StencilVariant variant) {
    for (const BoundarySpec& bc : all_face_mixes())
      for (bool var : {false, true}) {
        const std::array<int, 3> n{67, 35, 19};
        ASSERT_LE(compare(variant, n, bc, var, true, T(1)), tolerance<T>())
            << to_string(variant) << " " << describe(bc, n, var);
      }
    for (const std::array<int, 3> n :
         {std::array<int, 3>{3, 3, 3}, std::array<int, 3>{33, 9, 70}, std::array<int, 3>{5, 17, 4},
          std::array<int, 3>{34, 10, 35}})  // 34 x 10: the interior block is exactly one tile
      for (const BoundarySpec& bc : axis_mixes())
        for (bool var : {false, true})
          ASSERT_LE(compare(variant, n, bc, var, true, T(0.5)), tolerance<T>())
              << to_string(variant) << " " << describe(bc, n, var);
  }
};
TYPED_TEST_SUITE(CudaStencil, Precisions);

TYPED_TEST(CudaStencil, NaiveMatchesCpu) { this->check_variant(StencilVariant::naive); }
TYPED_TEST(CudaStencil, ZPencilMatchesCpu) { this->check_variant(StencilVariant::zpencil); }
TYPED_TEST(CudaStencil, ZPencilSharedTileMatchesCpu) {
  this->check_variant(StencilVariant::zpencil_smem);
}
TYPED_TEST(CudaStencil, ShuffleMatchesCpu) { this->check_variant(StencilVariant::shuffle); }
// The planes variant streams only rows of whole 16-byte units (else it is the shuffle
// variant, which check_variant's odd sizes take): x lengths of 4 and 2 values in a row,
// partial blocks of lines, blocks that split the planes, one interior plane or line, and
// rows of 512 values (float: blocks of 16 lines, the last one partial, two planes each).
// With an alpha field, and by material index, it is the variable x pass's kernel without
// the solve: the same sizes (chunks of 3 to 17 nodes; tasks of planes across slabs).
TYPED_TEST(CudaStencil, PlanesMatchesCpu) {
  using T = TypeParam;
  this->check_variant(StencilVariant::planes);
  for (const std::array<int, 3> n :
       {std::array<int, 3>{64, 35, 19}, std::array<int, 3>{36, 9, 70}, std::array<int, 3>{4, 17, 4},
        std::array<int, 3>{8, 3, 3}, std::array<int, 3>{128, 47, 97}, std::array<int, 3>{12, 300, 5},
        std::array<int, 3>{512, 70, 30}})
    for (const BoundarySpec& bc : axis_mixes())
      for (int field : {0, 1, 2})  // constant alpha, alpha field, material index
        for (bool source : {false, true}) {
          ASSERT_LE(this->compare(StencilVariant::planes, n, bc, field > 0, source, T(0.5), field == 2), tolerance<T>())
              << describe(bc, n, field > 0) << (field == 2 ? " by material" : "") << (source ? " with source" : "");
          EXPECT_EQ(last_stencil_variant(*this->gpu_),
                    bulk_copy_kernels_usable(*this->gpu_) ? StencilVariant::planes : StencilVariant::shuffle)
              << describe(bc, n, field > 0);
        }
}

// fold_neumann_terms on the GPU (the stepper's fold of Neumann data into the source): on
// the unknown nodes of the Neumann faces with data, the naive stencil's rhs at u = 0 to the
// bit (the same finish_rhs), every other node untouched (y+ has no data); and the CPU
// backend's fold within rounding. Every face mix, a source apart, in place, or none; a
// grid of many blocks a face and a tiny one.
TYPED_TEST(CudaStencil, FoldedNeumannTermsAreTheRightHandSideAtZero) {
  using T = TypeParam;
  for (const std::array<int, 3> n : {std::array<int, 3>{37, 29, 41}, std::array<int, 3>{4, 3, 5}})
    for (const BoundarySpec& bc : all_face_mixes())
      for (bool variable : {false, true})
        for (int base_kind = 0; base_kind < 3; ++base_kind) {  // a source apart, in place, none
          const Diffusion<T> d = make_diffusion<T>(n, bc, variable, this->rng_);
          const std::size_t size = d.grid.size();
          Array<T> galpha = variable ? this->to_gpu(d.alpha_field) : Array<T>();
          Array<T> calpha = variable ? this->to_cpu(d.alpha_field) : Array<T>();
          const OperatorView<T> gop = make_operator_view(d, galpha.data());
          const OperatorView<T> cop = make_operator_view(d, calpha.data());
          const auto data = this->random_neumann_data(d.grid, bc);
          const FaceData<T>&gface = data.gpu, &cface = data.cpu;
          const auto source = random_field<T>(size, this->rng_);
          const auto start = base_kind == 1 ? source : random_field<T>(size, this->rng_);
          Array<T> gsource = this->to_gpu(source), zero = this->gpu_->allocate(size);
          this->gpu_->fill(zero.data(), T(0), size);
          Array<T> expected = this->gpu_->allocate(size);
          set_stencil_variant(*this->gpu_, StencilVariant::naive);
          this->gpu_->operator_rhs(gop, zero.data(), base_kind == 2 ? nullptr : gsource.data(), gface, T(1),
                                   expected.data());
          Array<T> gf = this->to_gpu(start), cf = this->to_cpu(start), csource = this->to_cpu(source);
          this->gpu_->fold_neumann_terms(gop, gface, base_kind == 0 ? gsource.data() : base_kind == 1 ? gf.data() : nullptr,
                                         gf.data());
          this->cpu_->fold_neumann_terms(cop, cface, base_kind == 0 ? csource.data() : base_kind == 1 ? cf.data() : nullptr,
                                         cf.data());
          const std::vector<T> folded = this->from_gpu(gf), rhs = this->from_gpu(expected);
          const Grid3& g = d.grid;
          for (int k = 0; k < g.n[2]; ++k)
            for (int j = 0; j < g.n[1]; ++j)
              for (int i = 0; i < g.n[0]; ++i) {
                const std::size_t p = g.index(i, j, k);
                const T want = folds_neumann_node(gop, gface, i, j, k) ? rhs[p] : start[p];
                ASSERT_EQ(folded[p], want) << i << "," << j << "," << k << " " << describe(bc, n, variable)
                                           << " base kind " << base_kind;
              }
          EXPECT_LE(relative_difference(this->from_cpu(cf), folded), tolerance<T>()) << describe(bc, n, variable);
        }
}

TYPED_TEST(CudaStencil, NoSourceAndScaleEveryVariant) {
  for (StencilVariant v : kStencilVariants) {
    const BoundarySpec bc = boundary_mix(BoundaryKind::neumann, BoundaryKind::periodic,
                                         BoundaryKind::dirichlet);
    EXPECT_LE(this->compare(v, {41, 13, 66}, bc, true, false, TypeParam(-0.37)),
              tolerance<TypeParam>())
        << to_string(v);
  }
}

TYPED_TEST(CudaStencil, LargerGridEveryVariant) {
  // Several blocks in every direction and several z chunks per column.
  for (StencilVariant v : kStencilVariants) {
    const BoundarySpec bc = boundary_mix(BoundaryKind::periodic, BoundaryKind::neumann,
                                         BoundaryKind::periodic);
    EXPECT_LE(this->compare(v, {130, 47, 97}, bc, true, true, TypeParam(1)), tolerance<TypeParam>())
        << to_string(v);
  }
}

}  // namespace
}  // namespace adi3d::test

namespace adi3d::test {
namespace {

// Rough timings of every variant at 256^3 (host clock around a synchronised batch; the
// honest numbers come from `adi3d bench`). Run with --gtest_also_run_disabled_tests.
template <class T>
void time_variants() {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto gpu = make_cuda_backend<T>(0);
  std::mt19937 rng(7);
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::neumann,
                                       BoundaryKind::periodic);
  const Diffusion<T> d = make_diffusion<T>({256, 256, 256}, bc, false, rng);
  const std::size_t n = d.grid.size();
  const auto host = random_field<T>(n, rng);
  Array<T> u = gpu->allocate(n), r = gpu->allocate(n);
  gpu->upload(host.data(), u.data(), n);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  auto run = [&](const char* what, auto&& op_call) {
    op_call();
    gpu->synchronize();
    const int reps = 20;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; ++k) op_call();
    gpu->synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    std::printf("%-8s %-28s %8.3f ms  %7.1f GB/s (2 arrays/pt)\n", sizeof(T) == 4 ? "float" : "double",
                what, s * 1e3, 2.0 * static_cast<double>(n * sizeof(T)) / s * 1e-9);
  };
  for (StencilVariant v : kStencilVariants) {
    set_stencil_variant(*gpu, v);
    run((std::string("rhs ") + to_string(v)).c_str(),
        [&] { gpu->operator_rhs(op, u.data(), nullptr, FaceData<T>{}, T(1), r.data()); });
  }
  for (XSolveVariant v : {XSolveVariant::pcr_thomas, XSolveVariant::thread_thomas}) {
    set_x_solve_variant(*gpu, v);
    run((std::string("solve x ") + to_string(v)).c_str(),
        [&] { gpu->solve_lines(op, 0, T(1e-4), r.data()); });
  }
  for (LineScratch s : {LineScratch::automatic, LineScratch::global}) {
    CudaPolicy p = cuda_policy(*gpu);
    p.yz_scratch = s;
    p.constant_coefficients = s == LineScratch::automatic;
    set_cuda_policy(*gpu, p);
    const std::string tag = s == LineScratch::automatic ? "constant-coef" : "global scratch";
    run(("solve y " + tag).c_str(),
        [&] { gpu->solve_lines(op, 1, T(1e-4), r.data()); });
    run(("solve z cyclic " + tag).c_str(),
        [&] { gpu->solve_lines(op, 2, T(1e-4), r.data()); });
  }
  run("axpy", [&] { gpu->axpy(T(0.5), u.data(), r.data(), n); });
  run("norms", [&] { gpu->difference_norms(u.data(), r.data(), n); });
}

TEST(CudaTimings, DISABLED_VariantsAt256Float) { time_variants<float>(); }
TEST(CudaTimings, DISABLED_VariantsAt256Double) { time_variants<double>(); }

}  // namespace
}  // namespace adi3d::test
