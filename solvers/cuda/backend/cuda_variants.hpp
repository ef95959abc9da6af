#pragma once
// Kernel variants of the CUDA backend, selectable at run time (tests, bench, tune). Plain
// C++: code above solvers/ may include this without CUDA headers. The setters throw
// BackendUnavailable when the backend is not a CUDA backend.
#include "solvers/backend.hpp"

#include <cstddef>

namespace adi3d {

// operator_rhs (DESIGN.md §3, seeds 001 and 003).
enum class StencilVariant {
  naive,         // one thread per point, every neighbour from global memory
  zpencil,       // a thread walks k with prev/cur/next in registers
  zpencil_smem,  // zpencil plus a shared-memory XY tile (with halo) of the current plane
  shuffle,       // zpencil with x neighbours exchanged by warp shuffles (register cache)
  planes,        // planes of u streamed through shared memory by bulk copies (sm_90,
                 // constant alpha, rows of whole 16-byte units; else shuffle)
};
// Every stencil variant, for loops over them (tests, bench gpu).
constexpr StencilVariant kStencilVariants[] = {StencilVariant::naive, StencilVariant::zpencil,
                                               StencilVariant::zpencil_smem, StencilVariant::shuffle,
                                               StencilVariant::planes};

// Lines along x (contiguous in memory).
enum class XSolveVariant {
  pcr_thomas,     // hybrid PCR-Thomas in shared memory, one block per line (seed 002)
  thread_thomas,  // one thread per line, Thomas with global scratch (simple fallback)
  register_cr,    // K = 4/8/16 rows per thread in registers, reduced system by PCR in
                  // shared memory (seed 000); periodic lines take pcr_thomas
  cusparse,       // cuSPARSE gtsv2StridedBatch on generated a/b/c arrays (baseline;
                  // periodic axes fall back to thread_thomas)
  tridiag,        // the tridiag library (issue 6): its register partition kernel with the
                  // rows generated in registers (2 arrays per point); periodic lines and
                  // lines over 4096 rows solve cached a/b/c arrays (3 grid arrays, taken
                  // only when free; else pcr_thomas) with the library's cyclic solver
  warp_lines,     // a warp per line (WarpLineSolve: Dirichlet or Neumann ends, up to 1056
                  // unknowns, each value read and written once), on Thomas factors shared
                  // by every line with constant alpha, on each line's own rows with an
                  // alpha field (by its material index where one is attached; double
                  // lines of alpha up to 546 unknowns); other lines: tridiag
};

// Where the per-thread Thomas solves along y and z keep their scratch (modified upper
// diagonal, Sherman-Morrison vector).
enum class LineScratch {
  automatic,  // shared memory when the block's lines fit, else global
  shared,     // shared memory; falls back to global when the lines do not fit
  global,     // a grid-sized scratch array in global memory
};

struct CudaPolicy {
  // planes: 0.387 ms float / 0.788 ms double at 512^3 (H100, constant alpha, median of
  // 20; 94% / 91% of a device copy, the boundary shell included), against shuffle 0.530 /
  // 0.850, zpencil_smem 0.613 / 1.014, zpencil 0.688 / 1.099, naive 1.680 / 2.219
  // (adi3d bench gpu, 2026-11-24). An alpha field, rows that are not whole
  // 16-byte units, or a device before sm_90: shuffle.
  StencilVariant stencil = StencilVariant::planes;
  // warp_lines: 0.429 ms float / 0.845 ms double at 512^3 (85% of a device copy), against
  // tridiag (generated rows) 0.667 / 1.182 and pcr_thomas 2.991 / 4.712 (H100, constant
  // alpha, Dirichlet, `adi3d bench gpu`, median of 20, 2026-11-23). With an alpha field
  // 0.579 / 1.139 against tridiag's 0.715 / 1.300 (93% / 94% of copy, 2026-11-24).
  XSolveVariant x_solve = XSolveVariant::warp_lines;
  // y and z lines with Dirichlet or Neumann ends through the fused step's tile kernels
  // (WarpLineSolve: a warp per line, each value read and written once; 2 arrays per point,
  // 3 with an alpha field). 512^3, y / z: constant alpha 0.423 / 0.444 ms float and
  // 0.788 / 0.837 double (86 / 82% and 91 / 86% of copy) against Thomas with shared
  // factors 0.942 / 0.920 and 1.527 / 1.483; an alpha field 0.908 / 0.947 float and
  // 1.638 / 1.690 double against Thomas with generated rows 2.125 / 1.553 and 2.975 /
  // 2.949 (H100, adi3d bench gpu, 2026-11-23). false, or periodic or longer lines: the
  // per-thread Thomas solves below.
  bool yz_tiles = true;
  LineScratch yz_scratch = LineScratch::automatic;
  // The fused step's x and y passes as one kernel (fused_step_xy_kernel.cuh) where it
  // applies (float, constant alpha, lines of 163-546 nodes, sm_90): d goes from the x
  // solve to the y solve through L2, so the step needs 5 arrays per point from DRAM
  // instead of 7. Off: slower than the passes apart, whose kernels are bound by latency
  // per block rather than by DRAM, and which the one kernel's shared memory (two blocks
  // per SM for both roles) holds to fewer blocks: x + y 0.94 ms at best against 0.41 +
  // 0.42, step 1.61 against 1.49 ms (512^3 float, H100, adi3d_fused_tune, 2026-11-23);
  // and d still went through DRAM (ncu: 4 arrays' worth), the x streams drifting apart
  // further than L2 holds (docs/perf/fused_xy_h100_ncu.txt).
  bool fused_xy = false;
  // Constant alpha: form the Thomas factors once per call (all lines along an axis share
  // them) and stream only the right-hand sides. Same arithmetic as the general path.
  bool constant_coefficients = true;
  // An alpha field of at most kMaxMaterials values also as a byte per node and a table of
  // face means (material_index.hpp), for the fused variable step's kernels: they then read
  // a quarter (float) or an eighth (double) of the field's bytes and divide for no face.
  // Read when a stepper is made (DouglasStepper), not per call.
  bool material_index = true;
  // The fused step with an alpha field: its x pass as one kernel that forms the rhs and
  // solves (fused_step_var_x_kernel.cuh: u and the material index, or alpha, in; d out)
  // where it applies, rather than the stencil and the x solve apart (2 arrays more, and a
  // second read of the index or of alpha).
  bool variable_x_pass = true;
};

const char* to_string(StencilVariant v);
const char* to_string(XSolveVariant v);
const char* to_string(LineScratch v);

template <class T>
CudaPolicy cuda_policy(const Backend<T>& backend);
template <class T>
void set_cuda_policy(Backend<T>& backend, const CudaPolicy& policy);
template <class T>
void set_stencil_variant(Backend<T>& backend, StencilVariant v);
template <class T>
void set_x_solve_variant(Backend<T>& backend, XSolveVariant v);
// The variants the backend's last operator_rhs and last x-line solve ran: the policy's, or
// the one it handed the work to (the planes stencil and the warp_lines x solve take what
// they can; see CudaPolicy).
template <class T>
StencilVariant last_stencil_variant(const Backend<T>& backend);
template <class T>
XSolveVariant last_x_solve_variant(const Backend<T>& backend);
// Whether the backend's last y or z line solve ran by a warp per line (the tile kernels).
template <class T>
bool last_yz_by_warp(const Backend<T>& backend);
// Whether the backend's last fused Douglas step ran its x and y passes as one kernel
// (CudaPolicy::fused_xy).
template <class T>
bool last_fused_xy(const Backend<T>& backend);
// Whether its x pass, with an alpha field, ran as one kernel (CudaPolicy::variable_x_pass).
template <class T>
bool last_variable_x_pass(const Backend<T>& backend);
// Whether the kernels that stream planes by sm_90 bulk copies (the planes stencil, the
// fused step's x pass) run on this backend's device: compute capability 9.0 or newer and
// a build for it (CMAKE_CUDA_ARCHITECTURES with 90 or newer). Where they do not, the
// shuffle stencil and the cp.async x pass take their place.
template <class T>
bool bulk_copy_kernels_usable(const Backend<T>& backend);

// Device bytes a field set needs: `fields` grid-sized arrays plus the backend's line-solve
// scratch (2 grid-sized arrays), for elements of `element_bytes`. The tridiag x solve's
// coefficient arrays are not counted: its generated-row path needs none, and its array
// path (periodic x, nx > 4096) is taken only when the arrays fit in free memory.
inline std::size_t estimate_bytes(const Grid3& grid, int fields, std::size_t element_bytes) {
  return (static_cast<std::size_t>(fields) + 2) * grid.size() * element_bytes;
}
// Free memory on a CUDA device now (0 when there is no device).
std::size_t cuda_free_bytes(int device);

}  // namespace adi3d
