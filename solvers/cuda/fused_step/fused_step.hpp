#pragma once
// The fused Douglas step of the CUDA backend (DESIGN.md §3, "fusion is where the speed
// is"): three passes instead of five for constant alpha, Dirichlet data that does not
// move, insulated (zero-flux Neumann) faces and periodic axes, and for alpha fields
// between Dirichlet and Neumann faces (fused_step_var.hpp). Plain C++ (no CUDA headers):
// the stream is the runtime's opaque CUstream_st*.
#include "solvers/array.hpp"
#include "solvers/distributed/slab_coupling.hpp"
#include "solvers/operator_view.hpp"

#include <cstddef>
#include <memory>
#include <vector>

struct CUstream_st;

namespace adi3d::cuda {
namespace fused {
template <class T>
struct PassArgs;
}  // namespace fused

// Fallback tile kernel of a pass whose lines the warp-solve kernels do not take (more than
// 1058 nodes, or x lines whose plane slots do not fit in shared memory): lines per
// shared-memory tile (32 floats or 16 doubles: one 128-byte row segment for the y and z
// tiles); one thread per line runs the serial Thomas sweep.
template <class T>
struct FusedStepPolicy {
  static constexpr int lines = sizeof(T) == 4 ? 32 : 16;
  static constexpr int threads = 256;
};

// Measured (H100 SXM, 512^3, adi3d_fused_tune --passes, 2026-11-24; a device copy of one
// array moves 2.96 TB/s, read plus write):
//   float:  x 0.393 ms, y 0.395 ms, z 0.595 ms; step 1.378 ms in a row (floor of 7 arrays
//           1.26 ms: 91.4%)
//   double: x 0.789 ms, y 0.777 ms, z 1.149 ms; step 2.72 ms (floor 2.50 ms)
// i.e. 91-94% of copy bandwidth per pass (the float x pass with blocks of 16 lines, the
// float y and z passes with two tile buffers per block and two lines per warp solve,
// double y and z tiles of 256-byte rows: fused_step.cu). The x pass by bulk copies
// (sm_90); the cp.async x pass that rows which are not 16-byte units take ran 0.525 /
// 1.041 ms (ncu: 68 instructions per point, a quarter of them copying, half the stalls at
// the block barrier per plane). Before the warp solves (thread-per-line Thomas tiles): x 1.29,
// y 0.67, z 0.86 ms, step 2.85 ms float. y and z need 128-byte rows: 64-byte rows ran at
// 54-59% of copy; prefetching a block's next tile (and the z pass's u) into L2 ran at
// 65-69%, and launching the passes as programmatic dependent launches changed nothing
// (1.508 against 1.507 ms float). Also tried and slower
// (docs/perf/step_experiments_h100.txt): persistent x blocks, the z pass's u update by L2
// reductions or after an L2 prefetch, three tile buffers, and an L2 hand-off of d from the
// x pass to the y pass.
template <class T>
class FusedDouglasStep {
 public:
  // True when the fused path covers this operator: constant alpha, with Dirichlet or
  // Neumann faces or periodic axes (of 3 nodes or more), or an alpha field
  // (fused_variable_applies: no periodic axis); the caller keeps Neumann data non-zero off
  // it (the passes solve under zero flux); and lines short enough for a shared-memory
  // tile on this device.
  bool applies(const OperatorView<T>& op, int device) const;
  // u += du of one Douglas step with rhs dt (A u + f) (f may be null) and implicit
  // factors (I - tau A_axis); d is a grid-sized scratch. Returns false, launching nothing,
  // where applies() is false, or where a Neumann face meets lines that only the fallback
  // tile kernel takes (which solves between Dirichlet faces), or a periodic axis meets
  // them (the fallback has no cyclic lines either), or, with an alpha field, an
  // x pass other than the one kernel (fused_variable_step).
  bool run(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, CUstream_st* stream);
  // The step of one slab of a split z axis (Backend::fused_slab_step; op: the slab's, u's
  // ghost planes filled): run()'s three passes, where the x pass also forms the slab's
  // interface sums (slab_weights.hpp). Once it is done, a second stream reduces them,
  // solves them along y and gathers every rank's through `coupling` while the y pass runs;
  // then the ghost values, fixed combinations of the gathered sums (reduced_combination),
  // join d beside the ghost planes and the z pass solves and updates u. 7 arrays, as run(),
  // and a few planes. Returns false, launching nothing, where op has an alpha field or a
  // periodic x or y axis (its x pass with the sums is not built: the distributed backend
  // steps those unfused), the x pass is not the bulk one (sm_90, rows of 16-byte units) or
  // a pass takes the fallback kernel.
  bool run_slab(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, CUstream_st* stream,
                SlabCoupling<T>& coupling);

  // Whether the x and y passes may run as one kernel (fused_step_xy_kernel.cuh: d between
  // them through L2), where it applies; off by default (CudaPolicy::fused_xy says why).
  void set_merge_xy(bool merge) { merge_xy_ = merge; }
  // Whether the last run() took that kernel.
  bool last_merged_xy() const { return last_merged_xy_; }
  // With an alpha field, whether the x pass may run as one kernel (on by default:
  // CudaPolicy::variable_x_pass).
  void set_variable_x_pass(bool one_kernel) { variable_x_pass_ = one_kernel; }
  // Whether the last run() took it.
  bool last_variable_x_pass() const { return last_variable_x_pass_; }

 private:
  // Launch plan of the three passes for one grid shape, device and source/no source.
  struct Plan {
    int n[3] = {0, 0, 0};
    int unknown_faces = 0;  // the passes' face mask (unknown_face_mask): with n, the lines' unknowns
    int device = -1;
    bool source = false;
    bool aligned = false;  // u, d and f 16-byte aligned
    int x_bulk_lines = 0;  // lines per block of the x pass by bulk copies (0: cp.async)
    bool x_staged_source = false;  // its source rows by bulk loads too
    int kind[3] = {0, 0, 0};   // 1: chunked warp kernels, 2: fallback tile kernel
    int cap[3] = {0, 0, 0};    // rows per lane chunk of the warp solve (odd)
    int tiles[3] = {1, 1, 1};  // tile buffers of the y and z passes
    int threads[3] = {0, 0, 0};
    int grid[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    std::size_t smem[3] = {0, 0, 0};
    int kseg = 0;  // x pass: planes per block
    int sms = 0;   // the device's multiprocessors
    int per_sm[3] = {0, 0, 0};  // blocks of each chunked pass resident per multiprocessor
    bool merge_xy = false;  // the x and y passes as one kernel (the fields below)
    bool xy = false;
    int xy_grid = 0, xy_partitions = 0, xy_kseg = 0;
    std::size_t xy_smem = 0;
  };
  void make_plan(const OperatorView<T>& op, int device, bool source, bool aligned);
  void plan_xy(int optin, int sms);
  // The plan for op and arrays so aligned (merge: whether the merged x-y kernel may take
  // it); false where run() declines.
  bool plan_for(const OperatorView<T>& op, int device, bool source, bool aligned, bool merge);
  // plan_for these arrays, and the factors on the device (pass_offset_, pass_s_).
  bool prepare(const OperatorView<T>& op, const T* u, const T* f, const T* d, T tau, int device, bool merge,
               CUstream_st* stream);
  // One pass by the plan's chunked kernel (grid_x: its blocks, 0: the plan's).
  void launch_chunked_pass(const fused::PassArgs<T>& args, int axis, CUstream_st* stream, int grid_x = 0) const;

  // Thomas factors of the interior rows per axis (inv, a*inv, cp; 3 n values per axis),
  // on the host and on the device; re-uploaded only when they change.
  std::vector<T> host_factors_;
  Array<T> factors_;
  Plan plan_;
  bool merge_xy_ = false;
  bool variable_x_pass_ = true;
  bool last_variable_x_pass_ = false;
  bool last_merged_xy_ = false;
  Array<unsigned> xy_sync_;  // the merged kernel's counters
  std::size_t pass_offset_[3] = {0, 0, 0};  // each axis's factors in factors_
  T pass_s_[3] = {0, 0, 0};                 // and its s
  struct Slab;                              // run_slab's buffers, weights, stream and events
  std::shared_ptr<Slab> slab_;
};

}  // namespace adi3d::cuda
