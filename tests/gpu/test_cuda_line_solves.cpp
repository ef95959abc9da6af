// solve_lines on the CUDA backend against the CPU backend: x lines by hybrid PCR-Thomas,
// one thread per line, register packing, cuSPARSE, the tridiag library and a warp per
// line (and the
// fallback for lines too long for PCR), y and z lines
// through the fused step's tile kernels and by per-thread Thomas with shared and global
// scratch; every boundary combination, cyclic systems on periodic
// axes, variable alpha, odd and tiny sizes.
#include "gpu_test_support.hpp"

#include <array>
#include <iterator>
#include <vector>

namespace adi3d::test {
namespace {

template <class T>
class CudaLineSolve : public CudaTest<T> {
 protected:
  // by_material: the alpha field takes 4 values (a 800x contrast), and the GPU has its
  // material index attached too (as DouglasStepper keeps it), the CPU the field only.
  double compare(int axis, std::array<int, 3> n, const BoundarySpec& bc, bool variable_alpha,
                 bool by_material = false) {
    Diffusion<T> d = make_diffusion<T>(n, bc, variable_alpha || by_material, this->rng_);
    if (by_material) {
      this->make_four_materials(d.alpha_field);
      variable_alpha = true;
    }
    const std::size_t size = d.grid.size();
    const auto rhs = random_field<T>(size, this->rng_);
    Array<T> gd = this->to_gpu(rhs), cd = this->to_cpu(rhs);
    Array<T> galpha, calpha;
    if (variable_alpha) {
      galpha = this->to_gpu(d.alpha_field);
      calpha = this->to_cpu(d.alpha_field);
    }
    OperatorView<T> gop = make_operator_view(d, variable_alpha ? galpha.data() : nullptr);
    MaterialArrays<T> materials;
    if (by_material) materials = this->attach_material_index(gop, d.alpha_field, n);
    const OperatorView<T> cop = make_operator_view(d, variable_alpha ? calpha.data() : nullptr);
    // tau alpha / h^2 of order ten along the axis: the regime of ADI steps near dt ~ h.
    const T tau = T(4) / gop.inv_h2[axis];
    this->gpu_->solve_lines(gop, axis, tau, gd.data());
    this->cpu_->solve_lines(cop, axis, tau, cd.data());
    return relative_difference(this->from_cpu(cd), this->from_gpu(gd));
  }

  void check(int axis, const CudaPolicy& policy, std::vector<std::array<int, 3>> sizes) {
    set_cuda_policy(*this->gpu_, policy);
    for (const BoundarySpec& bc : all_face_mixes())
      for (bool var : {false, true}) {
        const std::array<int, 3> n{67, 35, 19};
        ASSERT_LE(compare(axis, n, bc, var), tolerance<T>())
            << "axis " << axis << " " << describe(bc, n, var);
      }
    for (const auto& n : sizes)
      for (const BoundarySpec& bc : axis_mixes())
        for (bool var : {false, true})
          ASSERT_LE(compare(axis, n, bc, var), tolerance<T>())
              << "axis " << axis << " " << describe(bc, n, var);
  }
};
TYPED_TEST_SUITE(CudaLineSolve, Precisions);

CudaPolicy with_x(XSolveVariant v) {
  CudaPolicy p;
  p.x_solve = v;
  return p;
}
CudaPolicy with_scratch(LineScratch s) {
  CudaPolicy p;
  p.yz_scratch = s;
  p.yz_tiles = false;               // constant-alpha cases take the scratch path too
  p.constant_coefficients = false;
  return p;
}

TYPED_TEST(CudaLineSolve, XPcrThomasMatchesCpu) {
  // 1024 is the longest line the PCR kernel takes; 2 and 3 rows are the shortest systems.
  this->check(0, with_x(XSolveVariant::pcr_thomas),
              {{3, 3, 3}, {1024, 3, 2}, {300, 5, 4}, {17, 2, 3}});
}

TYPED_TEST(CudaLineSolve, XThreadThomasMatchesCpu) {
  this->check(0, with_x(XSolveVariant::thread_thomas), {{3, 3, 3}, {200, 5, 4}});
}

// Register packing: K = 4 (n <= 1024), 8 (n <= 2048) and 16 (n <= 4096), line lengths that
// are not multiples of K or of the warp, every boundary mix (periodic falls back).
TYPED_TEST(CudaLineSolve, XRegisterPackedMatchesCpu) {
  this->check(0, with_x(XSolveVariant::register_cr),
              {{3, 3, 3}, {2, 3, 2}, {67, 35, 19}, {1024, 3, 2}, {1500, 2, 3}, {4001, 2, 2}});
}

// The cuSPARSE baseline solves the same systems (periodic axes fall back to Thomas).
TYPED_TEST(CudaLineSolve, XCusparseBaselineMatchesCpu) {
  this->check(0, with_x(XSolveVariant::cusparse), {{3, 3, 3}, {200, 5, 4}, {67, 35, 19}});
}

// The tridiag library: generated rows for non-periodic lines up to 4096 rows (8 rows per
// thread: 2 to 512 threads per line, thread and warp access, lines that are not multiples
// of 8 or of the warp), coefficient arrays and the library's cyclic solver for periodic
// lines, and the library's splitting for lines over 4096 rows.
TYPED_TEST(CudaLineSolve, XTridiagLibraryMatchesCpu) {
  this->check(0, with_x(XSolveVariant::tridiag),
              {{3, 3, 3}, {2, 3, 2}, {8, 5, 3}, {17, 2, 3}, {256, 3, 2}, {300, 5, 4}, {1024, 3, 2},
               {4001, 2, 2}, {4100, 2, 2}});
}

// A warp per x line (constant alpha by shared factors, an alpha field by each line's own
// rows; periodic lines of an alpha field take the tridiag library): the shortest lines, line lengths on
// either side of a chunk capacity and of the longest lines it takes (1056 unknowns; 1059
// nodes fall back, and double lines of an alpha field past 546, whose rows do not fit
// shared memory), odd lengths (rows not 16-byte aligned), and more lines than the
// device's warps, so that warps solve several lines each, copying the next into their
// second shared rows meanwhile; every boundary mix (Neumann rows halved, Dirichlet values
// moved into the end rows).
TYPED_TEST(CudaLineSolve, XWarpLinesMatchesCpu) {
  this->check(0, with_x(XSolveVariant::warp_lines),
              {{3, 3, 3}, {2, 3, 2}, {4, 5, 3}, {33, 2, 3}, {98, 3, 2}, {257, 5, 4}, {512, 3, 2}, {1058, 2, 2},
               {1059, 2, 2}, {19, 150, 200}});
}

// The same by material index (x_line_var_kernel with kMaterial: the bytes and the face
// table in place of alpha), every boundary mix, lines of every chunk capacity up to 1056
// unknowns (double lines of over 546 too: by index their rows fit), and warps that solve
// several lines each.
TYPED_TEST(CudaLineSolve, XWarpLinesByMaterialIndexMatchesCpu) {
  set_cuda_policy(*this->gpu_, with_x(XSolveVariant::warp_lines));
  for (const BoundarySpec& bc : all_face_mixes()) {
    const std::array<int, 3> n{67, 35, 19};
    ASSERT_LE(this->compare(0, n, bc, true, true), tolerance<TypeParam>()) << describe(bc, n, true) << " by material";
  }
  for (const std::array<int, 3>& n : std::vector<std::array<int, 3>>{
           {3, 3, 3}, {4, 5, 3}, {98, 3, 2}, {257, 5, 4}, {600, 3, 2}, {1058, 2, 2}, {19, 150, 200}})
    for (const BoundarySpec& bc : axis_mixes())
      ASSERT_LE(this->compare(0, n, bc, true, true), tolerance<TypeParam>()) << describe(bc, n, true) << " by material";
}

// The cached coefficient arrays (periodic x) follow tau, the x boundary kinds and the grid.
TYPED_TEST(CudaLineSolve, XTridiagCoefficientCacheFollowsTauAndBoundaries) {
  using T = TypeParam;
  set_cuda_policy(*this->gpu_, with_x(XSolveVariant::tridiag));
  for (std::array<int, 3> n : {std::array<int, 3>{19, 21, 23}, std::array<int, 3>{31, 5, 7}})
    for (BoundaryKind x : {BoundaryKind::periodic, BoundaryKind::neumann, BoundaryKind::periodic})
      for (T scale : {T(1), T(1), T(0.25), T(3), T(3)}) {
        const BoundarySpec bc = boundary_mix(x, BoundaryKind::dirichlet, BoundaryKind::neumann);
        const Diffusion<T> d = make_diffusion<T>(n, bc, false, this->rng_);
        const auto rhs = random_field<T>(d.grid.size(), this->rng_);
        Array<T> gd = this->to_gpu(rhs), cd = this->to_cpu(rhs);
        const OperatorView<T> op = make_operator_view(d, nullptr);
        const T tau = scale / op.inv_h2[0];
        this->gpu_->solve_lines(op, 0, tau, gd.data());
        this->cpu_->solve_lines(op, 0, tau, cd.data());
        ASSERT_LE(relative_difference(this->from_cpu(cd), this->from_gpu(gd)), tolerance<T>())
            << "scale " << scale << " " << describe(bc, n, false);
      }
}

TYPED_TEST(CudaLineSolve, XLongLinesFallBackToThreadThomas) {
  set_cuda_policy(*this->gpu_, with_x(XSolveVariant::pcr_thomas));
  for (const BoundarySpec& bc : axis_mixes())
    ASSERT_LE(this->compare(0, {1500, 3, 4}, bc, true), tolerance<TypeParam>())
        << describe(bc, {1500, 3, 4}, true);
}

TYPED_TEST(CudaLineSolve, YSharedScratchMatchesCpu) {
  this->check(1, with_scratch(LineScratch::shared), {{3, 3, 3}, {70, 40, 3}, {5, 90, 6}});
}

TYPED_TEST(CudaLineSolve, YGlobalScratchMatchesCpu) {
  this->check(1, with_scratch(LineScratch::global), {{3, 3, 3}, {5, 300, 6}});
}

TYPED_TEST(CudaLineSolve, ZSharedScratchMatchesCpu) {
  this->check(2, with_scratch(LineScratch::shared), {{3, 3, 3}, {33, 3, 50}});
}

TYPED_TEST(CudaLineSolve, ZGlobalScratchMatchesCpu) {
  this->check(2, with_scratch(LineScratch::global), {{3, 3, 3}, {6, 5, 400}});
}

CudaPolicy with_yz_tiles(bool on) {
  CudaPolicy p;
  p.yz_tiles = on;
  return p;
}

TYPED_TEST(CudaLineSolve, YConstantCoefficientPathMatchesCpu) {
  // Constant-alpha cases take the shared-factor path; variable-alpha ones the general path.
  this->check(1, with_yz_tiles(false), {{3, 3, 3}, {7, 260, 5}});
}

TYPED_TEST(CudaLineSolve, ZConstantCoefficientPathMatchesCpu) {
  this->check(2, with_yz_tiles(false), {{3, 3, 3}, {40, 6, 129}});
}

TYPED_TEST(CudaLineSolve, YZTilesRoutingMatchesCpu) {
  // Every boundary mix with the tiles on: tiles where they apply, Thomas else.
  for (int axis = 1; axis < 3; ++axis) this->check(axis, with_yz_tiles(true), {{3, 3, 3}, {9, 70, 66}});
}

// The tile kernels, for y and z lines of constant alpha and through an alpha field: every
// chunk capacity of the warp solve (1 to 1056 unknowns per line), Dirichlet and Neumann
// line ends, Dirichlet,
// Neumann and periodic faces on the other axes (their face lines are solved too), tile
// columns past nx, random data on the Dirichlet nodes (their values enter the first and
// last rows).
TYPED_TEST(CudaLineSolve, YZTilesMatchCpu) {
  using B = BoundaryKind;
  set_cuda_policy(*this->gpu_, with_yz_tiles(true));
  const int lines[] = {3, 4, 5, 40, 98, 99, 100, 290, 300, 545, 600, 700, 802, 803, 1056, 1058};
  for (int axis = 1; axis < 3; ++axis)
    for (B ends : {B::dirichlet, B::neumann})
      for (B others : {B::dirichlet, B::neumann, B::periodic}) {
        B kinds[3] = {others, others, others};
        kinds[axis] = ends;
        kinds[axis == 1 ? 2 : 1] = others == B::periodic ? B::dirichlet : others;
        const BoundarySpec bc = boundary_mix(kinds[0], kinds[1], kinds[2]);
        for (int m : lines) {
          if (ends == B::neumann && m > 1056) continue;  // 1058 unknowns: beyond the tiles
          for (std::array<int, 3> n : {std::array<int, 3>{67, 5, 4}, std::array<int, 3>{3, 4, 3}}) {
            n[axis] = m;
            for (bool field : {false, true})
              ASSERT_LE(this->compare(axis, n, bc, field), tolerance<TypeParam>())
                  << "axis " << axis << " " << describe(bc, n, field);
          }
        }
      }
}

// Two tile buffers, the next tile's copy in flight while the block solves and stores the
// current one: alpha-field lines of 130 to 546 nodes; constant alpha, float lines of 290
// to 546 nodes and double lines of 547 to 770 (chunks of 21 and 25 rows; lines of 300,
// 600 and 760 here, the others of one buffer); grids of more tiles than the device holds
// blocks (one per SM), so that blocks cycle through both buffers; Dirichlet line ends
// (whose stores start a row past the copies) and Neumann ends.
TYPED_TEST(CudaLineSolve, YZTilesCycleTwoBuffers) {
  using B = BoundaryKind;
  set_cuda_policy(*this->gpu_, with_yz_tiles(true));
  const std::array<int, 3> field_grids[] = {{5, 140, 140}, {20, 300, 150}};
  const std::array<int, 3> constant_grids[] = {{160, 300, 40}, {160, 600, 40}, {160, 760, 40}};
  for (bool field : {true, false})
    for (int axis = 1; axis < 3; ++axis)
      for (B ends : {B::dirichlet, B::neumann})
        for (std::array<int, 3> n : field ? std::vector(std::begin(field_grids), std::end(field_grids))
                                          : std::vector(std::begin(constant_grids), std::end(constant_grids))) {
          if (quick_mode() && n[0] > 5) continue;
          if (axis == 2) std::swap(n[1], n[2]);
          B kinds[3] = {B::dirichlet, B::dirichlet, B::dirichlet};
          kinds[axis] = ends;
          const BoundarySpec bc = boundary_mix(kinds[0], kinds[1], kinds[2]);
          ASSERT_LE(this->compare(axis, n, bc, field), tolerance<TypeParam>())
              << "axis " << axis << " " << describe(bc, n, field);
        }
}

// Cyclic lines (a periodic axis, constant alpha) by a warp per line along every axis: the
// warp solve of the Sherman-Morrison matrix and the correction as each line is stored,
// every chunk capacity up to 1056 nodes (1057 falls back), y/z tiles of one and two
// buffers (float 290-546 and double 547-770 nodes take two), tile columns past nx, more
// lines than the device holds warps, and every face kind on the other axes.
TYPED_TEST(CudaLineSolve, CyclicLinesByWarpMatchCpu) {
  using B = BoundaryKind;
  set_cuda_policy(*this->gpu_, CudaPolicy{});
  const int lines[] = {3, 4, 5, 33, 40, 98, 100, 290, 300, 545, 600, 760, 802, 803, 1056, 1057};
  for (int axis = 0; axis < 3; ++axis)
    for (B others : {B::dirichlet, B::neumann, B::periodic})
      for (int m : lines) {
        B kinds[3] = {others, others, others};
        kinds[axis] = B::periodic;
        const BoundarySpec bc = boundary_mix(kinds[0], kinds[1], kinds[2]);
        std::array<int, 3> n{67, 5, 4};
        if (axis == 0) n = {0, 9, 70};
        n[axis] = m;
        const double err = this->compare(axis, n, bc, false);
        ASSERT_LE(err, tolerance<TypeParam>()) << "axis " << axis << " " << describe(bc, n, false);
        const bool by_warp = axis == 0 ? last_x_solve_variant(*this->gpu_) == XSolveVariant::warp_lines
                                       : last_yz_by_warp(*this->gpu_);
        EXPECT_EQ(by_warp, m <= 1056) << "axis " << axis << " " << describe(bc, n, false);
      }
}

// Lines of two nodes with the default kernels (a warp per line along every axis): no
// interior row to take the off-diagonal from, and between a Dirichlet and a Neumann end a
// single unknown whose row is both halved and given the end value.
TYPED_TEST(CudaLineSolve, TwoNodeLinesMatchCpu) {
  for (int axis = 0; axis < 3; ++axis)
    for (const BoundarySpec& bc : all_face_mixes())
      for (bool field : {false, true}) {
        std::array<int, 3> n{6, 5, 4};
        n[axis] = 2;
        ASSERT_LE(this->compare(axis, n, bc, field), tolerance<TypeParam>())
            << "axis " << axis << " " << describe(bc, n, field);
      }
}

TYPED_TEST(CudaLineSolve, YZTilesAlternateLineLengthsOfOneKernel) {
  // Lines of 500 and 400 nodes take the same kernel with different shared memory: the
  // longer lines, solved again from their cached entry, must still launch (the kernel's
  // limit is set at every launch, not once per entry).
  set_cuda_policy(*this->gpu_, with_yz_tiles(true));
  const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::dirichlet, BoundaryKind::neumann);
  for (bool field : {false, true})
    for (int m : {500, 400, 500}) {
      const std::array<int, 3> n{5, m, 4};
      ASSERT_LE(this->compare(1, n, bc, field), tolerance<TypeParam>()) << describe(bc, n, field);
    }
}

TYPED_TEST(CudaLineSolve, YZTilesFollowTauAndEvictFactors) {
  // The factors of each tau stay on the device: a repeated tau must reuse them, and more
  // than the 32 kept must start the cache over, here while the y solve is still queued.
  using T = TypeParam;
  set_cuda_policy(*this->gpu_, with_yz_tiles(true));
  const BoundarySpec bc = boundary_mix(BoundaryKind::neumann, BoundaryKind::dirichlet, BoundaryKind::neumann);
  const Diffusion<T> d = make_diffusion<T>({19, 21, 23}, bc, false, this->rng_);
  const OperatorView<T> op = make_operator_view(d, nullptr);
  for (int round = 0; round < 45; ++round) {
    const T scale = round % 3 == 0 ? T(1) : T(0.05) * static_cast<T>(round);
    const auto rhs = random_field<T>(d.grid.size(), this->rng_);
    Array<T> gd = this->to_gpu(rhs), cd = this->to_cpu(rhs);
    for (int axis = 1; axis < 3; ++axis) {
      const T tau = scale / op.inv_h2[axis];
      this->gpu_->solve_lines(op, axis, tau, gd.data());
      this->cpu_->solve_lines(op, axis, tau, cd.data());
    }
    ASSERT_LE(relative_difference(this->from_cpu(cd), this->from_gpu(gd)), tolerance<T>()) << "round " << round;
  }
}

TYPED_TEST(CudaLineSolve, XThreadThomasGeneralPathMatchesCpu) {
  CudaPolicy p = with_x(XSolveVariant::thread_thomas);
  p.constant_coefficients = false;
  this->check(0, p, {{3, 3, 3}, {90, 5, 4}});
}

TYPED_TEST(CudaLineSolve, ConstantFactorsFollowTauAndBoundaries) {
  // The backend keeps the constant-coefficient factors between calls: a repeated call must
  // reuse them and a new tau or boundary kind must replace them.
  using T = TypeParam;
  for (BoundaryKind z : {BoundaryKind::periodic, BoundaryKind::neumann})
    for (T scale : {T(1), T(1), T(0.25), T(0.25), T(3)}) {
      const BoundarySpec bc = boundary_mix(BoundaryKind::dirichlet, BoundaryKind::neumann, z);
      const Diffusion<T> d = make_diffusion<T>({19, 21, 23}, bc, false, this->rng_);
      const auto rhs = random_field<T>(d.grid.size(), this->rng_);
      Array<T> gd = this->to_gpu(rhs), cd = this->to_cpu(rhs);
      const OperatorView<T> op = make_operator_view(d, nullptr);
      for (int axis = 0; axis < 3; ++axis) {
        const T tau = scale / op.inv_h2[axis];
        this->gpu_->solve_lines(op, axis, tau, gd.data());
        this->cpu_->solve_lines(op, axis, tau, cd.data());
      }
      ASSERT_LE(relative_difference(this->from_cpu(cd), this->from_gpu(gd)), tolerance<T>())
          << "scale " << scale;
    }
}

TYPED_TEST(CudaLineSolve, PeriodicConstantStaysConstant) {
  // A check independent of the CPU backend: on periodic axes with constant alpha every row
  // of I - tau A sums to 1, so a constant right-hand side is its own solution.
  const BoundarySpec bc = boundary_mix(BoundaryKind::periodic, BoundaryKind::periodic,
                                       BoundaryKind::periodic);
  const Diffusion<TypeParam> d = make_diffusion<TypeParam>({45, 7, 9}, bc, false, this->rng_);
  const OperatorView<TypeParam> op = make_operator_view(d, nullptr);
  const std::vector<TypeParam> ones(d.grid.size(), TypeParam(1));
  Array<TypeParam> g = this->to_gpu(ones);
  for (int axis = 0; axis < 3; ++axis) this->gpu_->solve_lines(op, axis, TypeParam(0.01), g.data());
  for (TypeParam v : this->from_gpu(g)) ASSERT_NEAR(v, 1.0, 50 * tolerance<TypeParam>());
}

}  // namespace
}  // namespace adi3d::test
