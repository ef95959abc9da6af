// The fused Douglas step of the CUDA backend (rhs in the x solve, update in the z solve)
// against the unfused CUDA operations and the CPU backend: constant and variable alpha
// (random, layered with a 100x jump, and random materials; the last two also through
// their material index), fixed Dirichlet faces, insulated faces, periodic axes (constant
// alpha), a source, several steps, odd sizes; and the cases it must decline.
#include "gpu_test_support.hpp"
#include "solvers/douglas_step.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/material_index.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

namespace adi3d::test {
namespace {

// Odd and power-of-two sizes, tiny lines (one or two unknowns), x rows with and without
// 16-byte alignment, every chunk capacity of the warp solve (c <= 3, 9, 17, 21, 25, 33
// rows per lane, on every axis; 802 nodes fill the 25-row chunks exactly), x-pass blocks
// that march through several planes (129^3, 10x1000x12: the ring of plane slots wraps), x
// rows of 512 floats (blocks of 16 x lines, the last partial), x rows of 1000 doubles
// (blocks of 3 lines, the last partial), y and z lines of 291-546
// nodes (tiles of 16 warps; double: of 32 lines, partial in x), y and z lines of 130-546
// nodes in more tiles than the device holds blocks (the alpha-field passes' two tile
// buffers, taken in turn), y and z lines of 600-1000 nodes (float: tiles of 16 warps;
// alpha fields: two tile buffers up to 674 nodes in float, 802 in double), and, last,
// lines too long for the warp solve (> 1058 nodes: the fallback tile kernel of that pass
// alone).
const std::array<int, 3> kSizes[] = {
    {67, 35, 19},  {3, 3, 3},      {129, 129, 129}, {33, 4, 65},  {37, 29, 41}, {3, 4, 5},     {4, 4, 4},
    {4, 3, 70},    {64, 20, 24},   {600, 6, 5},     {9, 600, 5},  {7, 5, 600},  {700, 6, 5},   {8, 760, 5},
    {6, 5, 802},   {5, 140, 140},  {20, 300, 200},  {10, 1000, 12}, {5, 6, 1000}, {1000, 5, 4}, {512, 21, 7},
    {40, 7, 300}};
const std::array<int, 3> kLongLines[] = {{1100, 4, 5}, {5, 1100, 4}, {4, 5, 1100}};

// ADI3D_GPU_QUICK (compute-sanitizer runs) leaves out grids of more than 150k points.
bool too_big_for_quick(const std::array<int, 3>& n) {
  return quick_mode() && static_cast<std::size_t>(n[0]) * n[1] * n[2] > 150000;
}

template <class T>
class FusedStep : public CudaTest<T> {
 protected:
  // The backend operation and the unfused CUDA operations (operator_rhs, solve_lines, axpy)
  // from u0: three steps with source f (or none), then one without; {fused, unfused}.
  // materials: the fused step reads the field's material index, the operations alpha
  // itself.
  std::array<std::vector<T>, 2> fused_and_unfused(const Diffusion<T>& d, const std::vector<T>& u0, const T* f, T dt,
                                                  T tau, bool materials) {
    Array<T> alpha;
    if (!d.alpha_field.empty()) alpha = this->to_gpu(d.alpha_field);
    const OperatorView<T> op = make_operator_view(d, d.alpha_field.empty() ? nullptr : alpha.data());
    OperatorView<T> fused_op = op;
    MaterialArrays<T> index;
    if (materials) {
      index = upload_materials(*this->gpu_, index_materials(d.alpha_field, {d.grid.n[0], d.grid.n[1], d.grid.n[2]}));
      index.attach(fused_op);
    }
    const std::size_t points = d.grid.size();
    Array<T> fused = this->to_gpu(u0), plain = this->to_gpu(u0);
    Array<T> scratch = this->to_gpu(random_field<T>(points, this->rng_));
    Array<T> r = this->gpu_->allocate(points);
    Backend<T>& b = *this->gpu_;
    for (int step = 0; step < 4; ++step) {
      const T* source = step < 3 ? f : nullptr;
      EXPECT_TRUE(b.fused_douglas_step(fused_op, fused.data(), source, dt, tau, scratch.data()))
          << describe(d.bc, {d.grid.n[0], d.grid.n[1], d.grid.n[2]}, !d.alpha_field.empty());
      b.operator_rhs(op, plain.data(), source, FaceData<T>{}, dt, r.data());
      for (int axis = 0; axis < 3; ++axis) b.solve_lines(op, axis, tau, r.data());
      b.axpy(T(1), r.data(), plain.data(), points);
    }
    return {this->from_gpu(fused), this->from_gpu(plain)};
  }
  // The backend operation itself against the unfused CUDA operations, with a random
  // source and random data (boundary values included).
  void expect_matches_unfused(const Diffusion<T>& d, T dt, T tau, bool materials = false) {
    const std::size_t points = d.grid.size();
    const auto u0 = random_field<T>(points, this->rng_);
    const Array<T> f = this->to_gpu(random_field<T>(points, this->rng_));
    const auto [fused, unfused] = fused_and_unfused(d, u0, f.data(), dt, tau, materials);
    EXPECT_LE(relative_difference(unfused, fused), 20 * tolerance<T>())
        << describe(d.bc, {d.grid.n[0], d.grid.n[1], d.grid.n[2]}, !d.alpha_field.empty());
  }
  // The same with constant alpha for every face mix on every size (those small enough for
  // ADI3D_GPU_QUICK).
  template <std::size_t M, std::size_t S>
  void expect_face_mixes_match_unfused(const std::array<BoundaryKind, 6> (&mixes)[M],
                                       const std::array<int, 3> (&sizes)[S]) {
    for (const auto& faces : mixes)
      for (const auto& n : sizes) {
        if (too_big_for_quick(n)) continue;
        BoundarySpec bc;
        bc.face = faces;
        expect_matches_unfused(make_diffusion<T>(n, bc, false, this->rng_), static_cast<T>(2e-3), static_cast<T>(1e-3));
      }
  }
};
TYPED_TEST_SUITE(FusedStep, Precisions);

// Layers across the diagonal of the grid, alpha 0.03 and 3 (a jump of 100 in every
// direction): the face means of unequal neighbours on every axis.
template <class T>
void make_layered(Diffusion<T>& d) {
  const Grid3& g = d.grid;
  d.alpha_field.assign(g.size(), T(0));
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i)
        d.alpha_field[g.index(i, j, k)] = ((i + 2 * j + 3 * k) / 5) % 2 == 0 ? T(0.03) : T(3);
}

// Every node one of kMaxMaterials values in [0.1, 10], at random: a jump at most faces.
// The contrast is the layered case's: the material index's face means are the exact
// ones, the alpha-field kernels' a division within 2 ulp, and a contrast of 1e4 (tau w up
// to 1e5 on x lines of 1000 nodes) took that last-bit difference to 1.5e-3 of the
// solution in float, as the condition number (about 4e5) allows.
template <class T>
void make_random_materials(Diffusion<T>& d, std::mt19937& rng) {
  std::uniform_real_distribution<double> value(std::log(0.1), std::log(10.0));
  std::vector<T> values(kMaxMaterials);
  for (T& v : values) v = static_cast<T>(std::exp(value(rng)));
  std::uniform_int_distribution<int> pick(0, kMaxMaterials - 1);
  d.alpha_field.resize(d.grid.size());
  for (T& a : d.alpha_field) a = values[pick(rng)];
}

// Constant alpha, random alpha in [0.1, 3], layered alpha, random materials; Dirichlet
// faces unless bc says otherwise.
enum class Alpha { constant, random, layered, materials };
template <class T>
Diffusion<T> make_case(const std::array<int, 3>& n, Alpha kind, std::mt19937& rng,
                       const BoundarySpec& bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                                             BoundaryKind::dirichlet)) {
  Diffusion<T> d = make_diffusion<T>(n, bc, kind == Alpha::random, rng);
  if (kind == Alpha::layered) make_layered(d);
  if (kind == Alpha::materials) make_random_materials(d, rng);
  return d;
}
constexpr Alpha kAlphas[] = {Alpha::constant, Alpha::random, Alpha::layered, Alpha::materials};

// The stepper takes the fused path on the GPU; the CPU runs the step operation by operation.
TYPED_TEST(FusedStep, StepperMatchesCpu) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const Alpha kind : kAlphas)
  for (const auto& n : kSizes) {
    if (too_big_for_quick(n)) continue;
    const Diffusion<T> d = make_case<T>(n, kind, this->rng_);
    EXPECT_LE(this->stepper_difference(d, SmoothForcing<T>(d.grid, 0), CudaPolicy{}, 5), 20 * tolerance<T>())
        << describe(bc, n, kind != Alpha::constant) << " alpha kind " << static_cast<int>(kind);
  }
}

TYPED_TEST(FusedStep, MatchesUnfusedCudaOperations) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const Alpha kind : kAlphas)
  for (const auto& n : kSizes) {
    if (too_big_for_quick(n)) continue;
    SCOPED_TRACE(static_cast<int>(kind));
    const Diffusion<T> d = make_case<T>(n, kind, this->rng_);
    this->expect_matches_unfused(d, static_cast<T>(2e-3), static_cast<T>(1e-3));
    if (kind == Alpha::layered || kind == Alpha::materials) {
      SCOPED_TRACE("material index");
      this->expect_matches_unfused(d, static_cast<T>(2e-3), static_cast<T>(1e-3), true);
    }
  }
  for (const auto& n : kLongLines)
    this->expect_matches_unfused(make_diffusion<T>(n, bc, false, this->rng_), static_cast<T>(2e-3),
                                 static_cast<T>(1e-3));
  // Variable alpha takes long x lines (the tridiag library's x solve), not long y or z lines.
  const Diffusion<T> layered = make_case<T>(kLongLines[0], Alpha::layered, this->rng_);
  this->expect_matches_unfused(layered, static_cast<T>(2e-3), static_cast<T>(1e-3));
  this->expect_matches_unfused(layered, static_cast<T>(2e-3), static_cast<T>(1e-3), true);
}

// Strongly anisotropic diffusivities and a large tau: tau w from about 5e-3 (z: lines
// barely coupled) to 8e4 (x: the elimination factors tend to 1/2, so the start value of
// a lane's chunk reaches far along the line).
// The variable step's x pass as one kernel (CudaPolicy::variable_x_pass) against the
// stencil and the x solve apart, the y and z passes the same: random materials, by their
// index and from alpha, with a source, every kernel variant (by index, float: chunks of 3,
// 5, 9 and 17 rows in blocks of 15 lines, 21, 25 and 33 in blocks of 7; double: 3 to 17
// in blocks of 7; from alpha, float 3 to 17 in blocks of 11, 21 and 25 in blocks of 7,
// double 3 to 9 in blocks of 9, 17 in blocks of 5 (512) and 4 (540), 21 in blocks of 3),
// partial blocks of lines; chunks past the line (264 and 512: the last 2 lanes' of 9 and
// 17 rows, which read the line's end); runs of planes within a slab and across slabs (40
// x 1000 x 5: 67 slabs of 3 planes by index in float, 91 to 143 otherwise, so that on a
// GPU of fewer resident blocks than their 201 to 429 units a block's ring goes on from
// slab to slab, the coefficients of a slab's first plane in a slot that its fourth takes);
// small enough for compute-sanitizer. Between Dirichlet faces, and with insulated faces
// on both x ends, a lower y and an upper z face (the one kernel mirrors the ghosts and
// halves those rows; the two take the stencil, the faces' halving and the plain solve).
TYPED_TEST(FusedStep, VariableXPassMatchesStencilAndSolve) {
  using T = TypeParam;
  const std::array<int, 3> sizes[] = {{64, 19, 40}, {160, 18, 7}, {264, 5, 6},  {512, 20, 9},   {540, 7, 6},
                                      {600, 9, 5},  {700, 4, 6},  {1000, 6, 5}, {40, 1000, 5}};
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann;
  BoundarySpec insulated;
  insulated.face = {N, N, N, D, D, N};
  for (const bool neumann : {false, true})
  for (const bool by_index : {true, false})
    for (const auto& n : sizes) {
      // The longest x lines the one-kernel pass takes (the others take the two kernels).
      const bool single = std::is_same_v<T, float>;
      const int longest = by_index ? (single ? 1058 : 546) : (single ? 802 : 674);
      if (n[0] > longest) continue;
      SCOPED_TRACE(by_index ? "by index" : "from alpha");
      SCOPED_TRACE(neumann ? "insulated faces" : "Dirichlet faces");
      Diffusion<T> d = neumann ? make_case<T>(n, Alpha::materials, this->rng_, insulated)
                               : make_case<T>(n, Alpha::materials, this->rng_);
      Array<T> alpha = this->to_gpu(d.alpha_field);
      OperatorView<T> op = make_operator_view(d, alpha.data());
      const MaterialArrays<T> index =
          upload_materials(*this->gpu_, index_materials(d.alpha_field, {n[0], n[1], n[2]}));
      if (by_index) index.attach(op);
      const std::size_t points = d.grid.size();
      const auto u0 = random_field<T>(points, this->rng_);
      Array<T> f = this->to_gpu(random_field<T>(points, this->rng_));
      Array<T> scratch = this->to_gpu(random_field<T>(points, this->rng_));
      std::vector<T> result[2];
      for (bool one_kernel : {true, false}) {
        CudaPolicy p{};
        p.variable_x_pass = one_kernel;
        set_cuda_policy(*this->gpu_, p);
        Array<T> u = this->to_gpu(u0);
        for (int step = 0; step < 2; ++step) {
          ASSERT_TRUE(this->gpu_->fused_douglas_step(op, u.data(), step == 0 ? f.data() : nullptr, T(2e-3), T(1e-3),
                                                     scratch.data()));
          ASSERT_EQ(last_variable_x_pass(*this->gpu_), one_kernel) << n[0] << " x " << n[1] << " x " << n[2];
        }
        result[one_kernel] = this->from_gpu(u);
      }
      set_cuda_policy(*this->gpu_, CudaPolicy{});
      EXPECT_LE(relative_difference(result[0], result[1]), 20 * tolerance<T>())
          << n[0] << " x " << n[1] << " x " << n[2];
      // Something moved: the comparison is not of two untouched copies of u0.
      EXPECT_GT(relative_difference(u0, result[1]), 100 * tolerance<T>());
    }
}

// The y and z passes' two tile buffers, the next tile's copy in flight while the block
// solves and stores the current one (float lines of 290 to 802 nodes, double lines of
// 547 to 770: chunks of 17, 21 and 25 rows; lines of 300 in double take one buffer):
// grids of more tiles than a GPU of 132 SMs holds blocks (one each), so that blocks cycle
// through both buffers.
TYPED_TEST(FusedStep, LongLineTilesCycleTwoBuffers) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const int m : {300, 600, 760})
    for (int axis = 1; axis < 3; ++axis) {
      std::array<int, 3> n{160, 40, 40};
      n[axis] = m;
      if (too_big_for_quick(n)) continue;
      SCOPED_TRACE(describe(bc, n, false));
      this->expect_matches_unfused(make_diffusion<T>(n, bc, false, this->rng_), static_cast<T>(2e-3),
                                   static_cast<T>(1e-3));
    }
}

TYPED_TEST(FusedStep, MatchesUnfusedStronglyCoupled) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const auto& n : {std::array<int, 3>{45, 38, 52}, std::array<int, 3>{200, 70, 33}}) {
    if (too_big_for_quick(n)) continue;
    Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
    d.alpha = {20.0, 1.0, 1e-4};
    this->expect_matches_unfused(d, T(0.05), T(0.1));
    // Variable, layered: tau w from about 0.1 to 1e4 on every axis.
    const Diffusion<T> layered = make_case<T>(n, Alpha::layered, this->rng_);
    this->expect_matches_unfused(layered, T(0.05), T(0.1));
    this->expect_matches_unfused(layered, T(0.05), T(0.1), true);
  }
}

// A diffusivity field scaled by s, stepped with dt and tau scaled by 1/s (no source), is
// the same step: the face means keep their precision where 2 a b leaves T's range (float:
// s = 2^-100 and 2^100; double 2^-600, 2^600), fused and unfused, from alpha and by
// material index, on x lines, y and z tiles (lines of 300: the float tiles' shared alpha).
TYPED_TEST(FusedStep, FarDiffusivitiesStepAsTheirScaledCopies) {
  using T = TypeParam;
  const int e = std::is_same_v<T, float> ? 100 : 600;
  for (const auto& n : {std::array<int, 3>{37, 29, 41}, std::array<int, 3>{9, 300, 300}}) {
    if (too_big_for_quick(n)) continue;
    for (const Alpha kind : {Alpha::random, Alpha::materials}) {
      const Diffusion<T> d = make_case<T>(n, kind, this->rng_);
      const auto u0 = random_field<T>(d.grid.size(), this->rng_);
      const T dt = T(2e-3), tau = T(1e-3);
      const bool materials = kind == Alpha::materials;
      const auto near = this->fused_and_unfused(d, u0, nullptr, dt, tau, materials);
      EXPECT_GT(relative_difference(u0, near[0]), 100 * tolerance<T>());  // something diffused
      for (const int sign : {-1, 1}) {
        const T s = std::ldexp(T(1), sign * e);
        Diffusion<T> far = d;
        for (T& a : far.alpha_field) a *= s;
        const auto got = this->fused_and_unfused(far, u0, nullptr, dt / s, tau / s, materials);
        for (int path = 0; path < 2; ++path)
          EXPECT_LE(relative_difference(near[path], got[path]), tolerance<T>())
              << (path == 0 ? "fused" : "unfused") << " s = 2^" << sign * e << " "
              << describe(d.bc, n, true) << (materials ? " by index" : "");
      }
    }
  }
}

// The x and y passes as one kernel (float, sm_90: d from the x role's streams to the y
// role's tiles through counters per plane) against the three passes apart: the same
// arithmetic, so the same bits. Lines of both chunk capacities it takes (9: 163-290
// nodes, 17: 291-546), planes split into ranges (164x164x5: 3 of one plane, small enough
// for the sanitizers; 300^3: 3 of 100; 200x172x90: 6, the last shorter; 300x291x9: 3,
// the last of one plane), one range (420x546x40), with and without
// a source; and shapes it declines (x and y lines of other capacities; rows that are not
// whole 16-byte units), which the separate passes take.
TYPED_TEST(FusedStep, MergedXYMatchesSeparatePasses) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  struct Case {
    std::array<int, 3> n;
    bool merges;  // on a device and build that run the bulk x pass, in float
  };
  const Case cases[] = {{{164, 164, 5}, true},  {{300, 300, 300}, true}, {{200, 172, 90}, true},
                        {{300, 291, 9}, true},  {{420, 546, 40}, true},   {{164, 300, 7}, false},
                        {{202, 200, 9}, false}};
  const bool can_merge = std::is_same_v<T, float> && bulk_copy_kernels_usable(*this->gpu_);
  for (const Case& c : cases) {
    if (too_big_for_quick(c.n)) continue;
    const Diffusion<T> d = make_diffusion<T>(c.n, bc, false, this->rng_);
    const OperatorView<T> op = make_operator_view(d, nullptr);
    const std::size_t points = d.grid.size();
    const auto u0 = random_field<T>(points, this->rng_);
    Array<T> f = this->to_gpu(random_field<T>(points, this->rng_));
    Array<T> merged = this->to_gpu(u0), apart = this->to_gpu(u0);
    Array<T> scratch = this->gpu_->allocate(points);
    for (int step = 0; step < 3; ++step) {
      const T* source = step < 2 ? f.data() : nullptr;
      CudaPolicy p = cuda_policy(*this->gpu_);
      p.fused_xy = true;
      set_cuda_policy(*this->gpu_, p);
      ASSERT_TRUE(this->gpu_->fused_douglas_step(op, merged.data(), source, T(2e-3), T(1e-3), scratch.data()));
      EXPECT_EQ(last_fused_xy(*this->gpu_), c.merges && can_merge) << describe(bc, c.n, false);
      p.fused_xy = false;
      set_cuda_policy(*this->gpu_, p);
      ASSERT_TRUE(this->gpu_->fused_douglas_step(op, apart.data(), source, T(2e-3), T(1e-3), scratch.data()));
      EXPECT_FALSE(last_fused_xy(*this->gpu_));
    }
    set_cuda_policy(*this->gpu_, CudaPolicy{});
    const std::vector<T> got = this->from_gpu(merged);
    EXPECT_EQ(relative_difference(this->from_gpu(apart), got), 0.0) << describe(bc, c.n, false);
    EXPECT_GT(relative_difference(u0, got), 0.0) << "the step left u alone: " << describe(bc, c.n, false);
  }
}

// The stepper with the merged x and y kernel (not the default) on a grid it takes, against
// the CPU backend.
TYPED_TEST(FusedStep, MergedXYStepperMatchesCpu) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  const std::array<int, 3> n{172, 168, 20};
  if (too_big_for_quick(n)) GTEST_SKIP() << "grid too large for ADI3D_GPU_QUICK";
  CudaPolicy merged{};
  merged.fused_xy = true;
  const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
  const double difference = this->stepper_difference(d, SmoothForcing<T>(d.grid, 0), merged, 4);
  const bool can_merge = std::is_same_v<T, float> && bulk_copy_kernels_usable(*this->gpu_);
  EXPECT_EQ(last_fused_xy(*this->gpu_), can_merge);
  EXPECT_LE(difference, 20 * tolerance<T>()) << describe(bc, n, false);
}

// The bulk x pass with a source loads each line warp's f rows a plane ahead into a second
// staging row (kStagedSource): blocks of many planes, so that both rows take turns, in
// every block shape that takes it (float: 16 lines at 512 nodes, 8 below; double: 4 lines,
// 3 at 1000 nodes; float lines of 1000 take the warps' loads: no room), slabs past the
// grid's last row (warps that load and store nothing); 16 x 6 x 1400 for compute-sanitizer.
TYPED_TEST(FusedStep, StagedSourceRowsMatchUnfused) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const auto& n : {std::array<int, 3>{512, 19, 300}, std::array<int, 3>{96, 13, 700},
                        std::array<int, 3>{1000, 5, 300}, std::array<int, 3>{16, 6, 1400}}) {
    if (too_big_for_quick(n)) continue;
    this->expect_matches_unfused(make_diffusion<T>(n, bc, false, this->rng_), static_cast<T>(2e-3),
                                 static_cast<T>(1e-3));
  }
}

// Insulated (zero-flux Neumann) faces among Dirichlet ones: the fused step against the
// unfused operations (whose rhs takes the half-cell balance at a Neumann node, and whose
// solves halve its row), random data and source. Every face insulated, one axis's, the
// lower or the upper faces, and a mix; x passes by bulk copies (rows of 16-byte units) and
// by cp.async; a Neumann end that moves a line into the next chunk capacity (98 nodes:
// 96 unknowns between Dirichlet faces, 97 with one Neumann end, 98 with two), the x pass's
// wide and narrow blocks (512 floats, 1000 doubles), y and z tiles of two buffers (600),
// blocks whose first line or plane is a face's (ghost rows and planes from their mirror).
TYPED_TEST(FusedStep, InsulatedFacesMatchUnfused) {
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann;
  const std::array<BoundaryKind, 6> mixes[] = {{N, N, N, N, N, N}, {N, N, D, D, D, D}, {D, D, N, N, D, D},
                                               {D, D, D, D, N, N}, {N, D, N, D, N, D}, {D, N, D, N, D, N},
                                               {N, D, D, N, N, D}};
  const std::array<int, 3> sizes[] = {{3, 3, 3},    {4, 4, 4},      {37, 29, 41}, {64, 20, 24}, {98, 98, 98},
                                      {97, 5, 96},  {33, 4, 65},    {512, 21, 7}, {1000, 5, 4}, {600, 6, 5},
                                      {9, 600, 5},  {7, 5, 600},    {129, 129, 129}};
  this->expect_face_mixes_match_unfused(mixes, sizes);
}

// The stepper with insulated faces and no data on them takes the fused step; the CPU runs
// the step operation by operation.
TYPED_TEST(FusedStep, InsulatedStepperMatchesCpu) {
  using T = TypeParam;
  BoundarySpec bc;
  bc.face = {BoundaryKind::neumann, BoundaryKind::neumann, BoundaryKind::neumann,
             BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::neumann};
  for (const auto& n : {std::array<int, 3>{37, 29, 41}, std::array<int, 3>{64, 20, 24}}) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
    EXPECT_LE(this->stepper_difference(d, SmoothForcing<T>(d.grid, 0, true), CudaPolicy{}, 5), 20 * tolerance<T>())
        << describe(bc, n, false);
  }
}

// Periodic axes (constant alpha; every line along them cyclic) alone and among Dirichlet
// and insulated faces: the fused step against the unfused operations (the stencil wrapped,
// the plain cyclic line solves), random data and source. Every axis periodic, each one
// alone, and mixes with Neumann and Dirichlet faces; x passes by bulk copies (rows of
// 16-byte units) and by cp.async; lines of 3 and 4 nodes; lines whose all-unknown nodes
// take the next chunk capacity (96 and 97 nodes: 32 x 3 rows and past them), the x pass's
// wide and narrow blocks (512 floats, 1000 doubles), y and z tiles of two buffers (600),
// blocks whose first line or plane is node 0 (their ghosts from the other end), and the
// ring of plane slots wrapping (129^3).
TYPED_TEST(FusedStep, PeriodicAxesMatchUnfused) {
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann, P = BoundaryKind::periodic;
  const std::array<BoundaryKind, 6> mixes[] = {{P, P, P, P, P, P}, {P, P, D, D, D, D}, {D, D, P, P, D, D},
                                               {D, D, D, D, P, P}, {P, P, N, D, D, N}, {N, D, P, P, N, N},
                                               {D, N, N, D, P, P}, {P, P, P, P, N, D}};
  const std::array<int, 3> sizes[] = {{3, 3, 3},   {4, 4, 4},   {37, 29, 41}, {64, 20, 24}, {96, 97, 96},
                                      {97, 96, 97}, {33, 4, 65}, {512, 21, 7}, {1000, 5, 4}, {600, 6, 5},
                                      {9, 600, 5}, {7, 5, 600}, {129, 129, 129}};
  this->expect_face_mixes_match_unfused(mixes, sizes);
}

// Strong coupling along a periodic x axis (tau w up to about 2e4: a cyclic line's
// correction is then of the order of the solution itself), weak along z.
TYPED_TEST(FusedStep, PeriodicAxesMatchUnfusedStronglyCoupled) {
  using T = TypeParam;
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann, P = BoundaryKind::periodic;
  using Faces = std::array<BoundaryKind, 6>;
  for (const Faces& faces : {Faces{P, P, P, P, P, P}, Faces{P, P, N, N, D, D}})
    for (const auto& n : {std::array<int, 3>{96, 33, 17}, std::array<int, 3>{300, 9, 11}}) {
      BoundarySpec bc;
      bc.face = faces;
      Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
      d.alpha = {20.0, 1.0, 1e-4};
      this->expect_matches_unfused(d, T(0.05), T(0.1));
    }
}

// The stepper with periodic axes takes the fused step on every step (the CPU runs the step
// operation by operation) and matches the CPU.
TYPED_TEST(FusedStep, PeriodicStepperStepsFusedAndMatchesCpu) {
  using T = TypeParam;
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann, P = BoundaryKind::periodic;
  using Faces = std::array<BoundaryKind, 6>;
  for (const Faces& faces : {Faces{P, P, P, P, D, D}, Faces{N, N, P, P, P, P}})
    for (const auto& n : {std::array<int, 3>{32, 32, 33}, std::array<int, 3>{37, 29, 41}}) {
      BoundarySpec bc;
      bc.face = faces;
      const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
      const SmoothForcing<T> forcing(d.grid, 0, true);
      const auto u0 = random_field<T>(d.grid.size(), this->rng_);
      DouglasStepper<T> gs(*this->gpu_, d, forcing, 0.5);
      DouglasStepper<T> cs(*this->cpu_, d, forcing, 0.5);
      Array<T> gu = this->to_gpu(u0), cu = this->to_cpu(u0);
      gs.initialize(gu.data(), 0.0);
      cs.initialize(cu.data(), 0.0);
      constexpr int kSteps = 5;
      const double dt = 2e-3;
      for (int step = 0; step < kSteps; ++step) {
        gs.step(gu.data(), step * dt, dt);
        cs.step(cu.data(), step * dt, dt);
      }
      EXPECT_EQ(gs.fused_steps(), kSteps) << describe(bc, n, false);
      EXPECT_LE(relative_difference(this->from_cpu(cu), this->from_gpu(gu)), 20 * tolerance<T>())
          << describe(bc, n, false);
    }
}

// Insulated faces with an alpha field (random, and layered with a 100x jump) and by a
// material index (random materials), as InsulatedFacesMatchUnfused: the one-kernel x pass
// on x rows of 16-byte units, whose ghost rows, planes and x ends mirror alpha (or the
// material bytes) with u, in blocks of every width it takes (512 floats: 11 or 15 lines;
// 640: 7, or 3 doubles); on other rows (37, 97, 33) the stencil, the faces' halving and
// the plain x solve; y and z tiles of one buffer, of two (600), of two sharing an alpha
// tile (300), and lines whose Neumann ends move them into the next chunk capacity (98).
TYPED_TEST(FusedStep, InsulatedFacesWithAlphaFieldsMatchUnfused) {
  using T = TypeParam;
  constexpr BoundaryKind D = BoundaryKind::dirichlet, N = BoundaryKind::neumann;
  const std::array<BoundaryKind, 6> mixes[] = {{N, N, N, N, N, N}, {N, N, D, D, D, D}, {D, D, N, N, D, D},
                                               {D, D, D, D, N, N}, {N, D, N, D, N, D}, {D, N, D, N, D, N}};
  const std::array<int, 3> sizes[] = {{4, 4, 4},    {3, 3, 3},    {36, 29, 41}, {37, 29, 41}, {96, 98, 98},
                                      {96, 5, 97},  {97, 5, 96},  {32, 4, 65},  {33, 4, 65},  {512, 21, 7},
                                      {640, 5, 4},  {8, 600, 5},  {8, 5, 600},  {8, 300, 5},  {8, 5, 300},
                                      {128, 129, 129}};
  for (const Alpha kind : {Alpha::random, Alpha::layered, Alpha::materials})
    for (const auto& faces : mixes)
      for (const auto& n : sizes) {
        if (too_big_for_quick(n)) continue;
        BoundarySpec bc;
        bc.face = faces;
        SCOPED_TRACE(kind == Alpha::materials ? "material index" : kind == Alpha::layered ? "layered" : "random");
        this->expect_matches_unfused(make_case<T>(n, kind, this->rng_, bc), static_cast<T>(2e-3),
                                     static_cast<T>(1e-3), kind == Alpha::materials);
      }
}

// SmoothForcing's Neumann data and source (speed 1), each fixed in time (taken at t = 0)
// or moving, or no source; its Dirichlet data fixed (moving Dirichlet data takes the
// unfused step).
enum class Source { none, fixed, moving };
template <class T>
class FluxForcing final : public Forcing<T> {
 public:
  FluxForcing(const Diffusion<T>& d, Source source, bool data_moves)
      : smooth_(d.grid, 1), bc_(d.bc), source_(source), data_moves_(data_moves) {}
  bool has_source() const override { return source_ != Source::none; }
  bool source_depends_on_time() const override { return source_ == Source::moving; }
  void source(double t, T* v) const override { smooth_.source(source_ == Source::moving ? t : 0, v); }
  bool boundary_depends_on_time(int face) const override { return moves(face); }
  bool boundary_is_zero(int) const override { return false; }
  void boundary(int face, double t, T* v) const override { smooth_.boundary(face, moves(face) ? t : 0, v); }

 private:
  bool moves(int face) const { return data_moves_ && bc_.face[face] == BoundaryKind::neumann; }
  SmoothForcing<T> smooth_;
  BoundarySpec bc_;
  Source source_;
  bool data_moves_;
};

const char* forcing_name(Source s, bool data_moves) {
  static const char* names[2][3] = {{"fixed data, no source", "fixed data and source", "fixed data, moving source"},
                                    {"moving data, no source", "moving data, fixed source", "moving data and source"}};
  return names[data_moves][static_cast<int>(s)];
}

// Non-zero Neumann data, fixed or moving in time, with a source fixed, moving or none: the
// stepper folds the data's face terms into the source (once, or on each step where
// anything moves: fold_neumann_terms) and takes the fused step on every step, and matches
// the CPU stepper (which adds them to every step's rhs).
TYPED_TEST(FusedStep, NeumannDataJoinsTheSourceAndMatchesCpu) {
  using T = TypeParam;
  BoundarySpec bc;
  bc.face = {BoundaryKind::neumann, BoundaryKind::neumann,   BoundaryKind::neumann,
             BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::neumann};
  for (const auto& n : {std::array<int, 3>{37, 29, 41}, std::array<int, 3>{64, 20, 24}})
    for (bool data_moves : {false, true})
      for (Source source : {Source::none, Source::fixed, Source::moving}) {
        const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
        const FluxForcing<T> forcing(d, source, data_moves);
        EXPECT_LE(this->stepper_difference(d, forcing, CudaPolicy{}, 5), 20 * tolerance<T>())
            << describe(bc, n, false) << " " << forcing_name(source, data_moves);
        Array<T> u = this->to_gpu(random_field<T>(d.grid.size(), this->rng_));
        DouglasStepper<T> stepper(*this->gpu_, d, forcing, 0.5);
        stepper.initialize(u.data(), 0.0);
        for (int step = 0; step < 3; ++step) stepper.step(u.data(), step * 2e-3, 2e-3);
        EXPECT_TRUE(stepper.neumann_data_in_source()) << describe(bc, n, false) << " " << forcing_name(source, data_moves);
        EXPECT_EQ(stepper.fused_steps(), 3) << describe(bc, n, false) << " " << forcing_name(source, data_moves);
      }
}

// A heat flux, fixed or moving, through Neumann faces of an alpha field (random: the
// stepper reads alpha) and of layers (two materials: it reads their index): the stepper
// folds the data into the source, takes the fused step on every step and matches the CPU
// stepper.
TYPED_TEST(FusedStep, NeumannDataOnAlphaFieldsStepsFusedAndMatchesCpu) {
  using T = TypeParam;
  BoundarySpec bc;
  bc.face = {BoundaryKind::neumann, BoundaryKind::neumann,   BoundaryKind::neumann,
             BoundaryKind::dirichlet, BoundaryKind::neumann, BoundaryKind::neumann};
  for (const Alpha kind : {Alpha::random, Alpha::layered})
    for (const auto& n : {std::array<int, 3>{36, 29, 41}, std::array<int, 3>{64, 20, 24}})
      for (bool data_moves : {false, true}) {
        const Diffusion<T> d = make_case<T>(n, kind, this->rng_, bc);
        const Source source = data_moves ? Source::moving : Source::fixed;
        const FluxForcing<T> forcing(d, source, data_moves);
        EXPECT_LE(this->stepper_difference(d, forcing, CudaPolicy{}, 5), 20 * tolerance<T>())
            << describe(bc, n, true) << " alpha kind " << static_cast<int>(kind) << " " << forcing_name(source, data_moves);
        Array<T> u = this->to_gpu(random_field<T>(d.grid.size(), this->rng_));
        DouglasStepper<T> stepper(*this->gpu_, d, forcing, 0.5);
        stepper.initialize(u.data(), 0.0);
        for (int step = 0; step < 2; ++step) stepper.step(u.data(), step * 2e-3, 2e-3);
        EXPECT_EQ(stepper.fused_steps(), 2) << describe(bc, n, true) << " alpha kind " << static_cast<int>(kind);
      }
}

// u and the scratch one value past a 16-byte boundary: the x pass then streams rows
// without bulk copies (which need 16-byte aligned rows); both x passes give the same step,
// on grids whose rows are whole 16-byte units (the bulk pass's) and one whose rows are not.
// So does a source one value past a boundary, with u and the scratch aligned.
TYPED_TEST(FusedStep, MisalignedArraysMatchAligned) {
  using T = TypeParam;
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                       BoundaryKind::dirichlet);
  for (const auto& n : {std::array<int, 3>{64, 20, 24}, std::array<int, 3>{8, 70, 9}, std::array<int, 3>{37, 29, 41}}) {
    const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
    const OperatorView<T> op = make_operator_view(d, nullptr);
    const std::size_t points = d.grid.size();
    const auto u0 = random_field<T>(points, this->rng_);
    const auto f0 = random_field<T>(points, this->rng_);
    std::vector<T> shifted(points + 1, T(0));
    std::copy(u0.begin(), u0.end(), shifted.begin() + 1);
    std::vector<T> f_shifted(points + 1, T(0));
    std::copy(f0.begin(), f0.end(), f_shifted.begin() + 1);
    Array<T> aligned = this->to_gpu(u0), misaligned = this->to_gpu(shifted), f = this->to_gpu(f0);
    Array<T> with_shifted_f = this->to_gpu(u0), f_misaligned = this->to_gpu(f_shifted);
    Array<T> scratch = this->gpu_->allocate(points), scratch_shifted = this->gpu_->allocate(points + 1);
    for (int step = 0; step < 2; ++step) {
      const T* source = step == 0 ? f.data() : nullptr;
      ASSERT_TRUE(this->gpu_->fused_douglas_step(op, aligned.data(), source, T(2e-3), T(1e-3), scratch.data()));
      ASSERT_TRUE(this->gpu_->fused_douglas_step(op, misaligned.data() + 1, source, T(2e-3), T(1e-3),
                                                 scratch_shifted.data() + 1));
      ASSERT_TRUE(this->gpu_->fused_douglas_step(op, with_shifted_f.data(), step == 0 ? f_misaligned.data() + 1 : nullptr,
                                                 T(2e-3), T(1e-3), scratch.data()));
    }
    std::vector<T> got = this->from_gpu(misaligned);
    got.erase(got.begin());
    EXPECT_LE(relative_difference(this->from_gpu(aligned), got), 20 * tolerance<T>())
        << describe(bc, n, false);
    EXPECT_GT(relative_difference(u0, got), 0.0) << "the step left u alone: " << describe(bc, n, false);
    EXPECT_LE(relative_difference(this->from_gpu(aligned), this->from_gpu(with_shifted_f)), 20 * tolerance<T>())
        << "source one value past a 16-byte boundary: " << describe(bc, n, false);
  }
}

// Periodic axes with an alpha field are not the fused path's, nor periodic axes or Neumann
// faces on lines longer than the warp solve takes or on an axis of fewer than 3 nodes
// (constant alpha or an alpha field), nor variable alpha on y or z lines longer than the
// warp solve takes: it must decline and leave u alone, and the CPU backend never fuses.
TYPED_TEST(FusedStep, DeclinesWhatItDoesNotCover) {
  using T = TypeParam;
  const std::array<int, 3> n{17, 9, 11};
  const auto u0 = random_field<T>(static_cast<std::size_t>(n[0]) * n[1] * n[2], this->rng_);
  Array<T> u = this->to_gpu(u0), scratch = this->to_gpu(u0);
  const T dt = T(1e-3), tau = T(5e-4);
  {
    const Diffusion<T> d = make_diffusion<T>(n, boundary_mix(BoundaryKind::periodic, BoundaryKind::dirichlet,
                                                             BoundaryKind::dirichlet),
                                             true, this->rng_);
    Array<T> alpha = this->to_gpu(d.alpha_field);
    EXPECT_FALSE(this->gpu_->fused_douglas_step(make_operator_view(d, alpha.data()), u.data(), nullptr,
                                                dt, tau, scratch.data()));
  }
  for (const auto& m : {kLongLines[1], kLongLines[2]}) {
    const Diffusion<T> d = make_case<T>(m, Alpha::random, this->rng_);
    Array<T> alpha = this->to_gpu(d.alpha_field);
    const auto v0 = random_field<T>(d.grid.size(), this->rng_);
    Array<T> v = this->to_gpu(v0);
    Array<T> w = this->gpu_->allocate(d.grid.size());
    EXPECT_FALSE(this->gpu_->fused_douglas_step(make_operator_view(d, alpha.data()), v.data(), nullptr,
                                                dt, tau, w.data()));
    EXPECT_EQ(relative_difference(v0, this->from_gpu(v)), 0.0);
  }
  for (const BoundaryKind kind : {BoundaryKind::neumann, BoundaryKind::periodic})
  for (const bool field : {false, true})
    for (const auto& m : {std::array<int, 3>{1100, 4, 5}, std::array<int, 3>{17, 2, 11}}) {
      const Diffusion<T> d = make_diffusion<T>(m, boundary_mix(kind, kind, BoundaryKind::dirichlet), field, this->rng_);
      Array<T> alpha;
      if (field) alpha = this->to_gpu(d.alpha_field);
      const auto v0 = random_field<T>(d.grid.size(), this->rng_);
      Array<T> v = this->to_gpu(v0);
      Array<T> w = this->gpu_->allocate(d.grid.size());
      EXPECT_FALSE(this->gpu_->fused_douglas_step(make_operator_view(d, field ? alpha.data() : nullptr), v.data(),
                                                  nullptr, dt, tau, w.data()))
          << describe(d.bc, m, field);
      EXPECT_EQ(relative_difference(v0, this->from_gpu(v)), 0.0);
    }
  EXPECT_EQ(relative_difference(u0, this->from_gpu(u)), 0.0);
  const Diffusion<T> d = make_diffusion<T>(n, boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet,
                                                           BoundaryKind::dirichlet),
                                           false, this->rng_);
  Array<T> cu = this->to_cpu(u0), cs = this->to_cpu(u0);
  EXPECT_FALSE(this->cpu_->fused_douglas_step(make_operator_view(d, nullptr), cu.data(), nullptr, dt,
                                              tau, cs.data()));
}

}  // namespace
}  // namespace adi3d::test
