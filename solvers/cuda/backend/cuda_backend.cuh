#pragma once
// The CUDA backend's class and the launchers its operations call. Internal to
// solvers/cuda: everything here may use CUDA types.
#include "solvers/backend.hpp"
#include "solvers/discretization.hpp"
#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/cuda/fused_step/fused_step.hpp"
#include "solvers/cuda/line_solves/line_solve_warp.hpp"

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <vector>

namespace adi3d::cuda {

// Neumann face arrays as a kernel argument (std::array has no device operator[]).
template <class T>
struct FacePtrs {
  const T* g[6];
};

// Block shapes. Untuned guesses for sm_90 (no measurement yet): 32-wide rows keep every
// warp on one x row (coalesced, and required by the shuffle variant); 8 rows per block and
// 32 planes per z-pencil chunk give 256-thread blocks and enough blocks at 64^3.
struct StencilPolicy {
  static constexpr int tile_x = 32;
  static constexpr int tile_y = 8;
  static constexpr int k_chunk = 32;
};

struct LineSolvePolicy {
  static constexpr int thread_thomas_block = 128;  // lines per block, global scratch
  static constexpr int shared_thomas_block = 64;   // lines per block, shared scratch
  static constexpr std::size_t shared_scratch_bytes = 48 * 1024;  // no opt-in needed
  static constexpr int pcr_rows_per_thread = 4;    // registers per thread per PCR stage
  static constexpr int pcr_max_threads = 256;
  static constexpr int pcr_thomas_rows = 8;        // PCR stops when subsystems are this short
  static constexpr int pcr_max_n = pcr_rows_per_thread * pcr_max_threads;  // 1024
  // Generated-row register kernel of XSolveVariant::tridiag: the tridiag library's static
  // guess for its register base (base_chunk 8, 128-thread blocks; tridiag_cuda.cu
  // static_policy), not retuned for generated rows. 8 rows per thread take lines up to
  // 4096 rows (512 threads) in float and double.
  static constexpr int tridiag_rows_per_thread = 8;
  static constexpr int tridiag_block_threads = 128;
  static constexpr int tridiag_generated_max_rows = 8 * 512;  // checked in line_solve_x_tridiag.cu
};

// Returns the variant whose kernel formed the interior: v, or shuffle where the planes
// variant does not apply (rows not of whole 16-byte units, no sm_90 code; with an alpha
// field, also lines the variable x pass does not take: launch_var_planes_stencil).
template <class T>
StencilVariant launch_operator_rhs(StencilVariant v, const OperatorView<T>& op, const T* u, const T* f,
                                   const FacePtrs<T>& g, T scale, T* r, cudaStream_t s);
// f = base + Neumann terms on the unknown nodes of the Neumann faces with data (Backend::
// fold_neumann_terms: finish_rhs at A u = 0, the same bits as launch_operator_rhs's there).
template <class T>
void launch_fold_neumann_terms(const OperatorView<T>& op, const T* base, const FacePtrs<T>& g, T* f, cudaStream_t s);
// The planes stencil of an alpha field or material index (stencil_var_planes.cu) on op's
// interior nodes, the shell left to the caller; false, launching nothing, where it does
// not apply (fused::launch_var_x).
template <class T>
bool launch_var_planes_stencil(const OperatorView<T>& op, const T* u, const T* f, T scale, T* r, cudaStream_t s);
// Whether the planes stencil's kernel runs on this device (bulk_copies_usable).
template <class T>
bool planes_stencil_usable(int device);
// Thomas per thread along any axis. The path (constant coefficients, shared scratch,
// global scratch) follows the policy and the operator; scratch must hold
// thread_thomas_scratch_size elements (none on the shared path).
// On the constant-coefficient path the scratch holds the shared factors (4n values);
// factors_ready says they were formed by an earlier call with the same key.
template <class T>
bool thread_thomas_constant_path(const OperatorView<T>& op, int axis, const CudaPolicy& policy);
template <class T>
std::size_t thread_thomas_scratch_size(const OperatorView<T>& op, int axis,
                                       const CudaPolicy& policy);
template <class T>
void launch_thread_thomas(const OperatorView<T>& op, int axis, T tau, T* d, T* scratch,
                          const CudaPolicy& policy, bool factors_ready, cudaStream_t s);
// Hybrid PCR-Thomas for x lines; returns false (and launches nothing) when the lines are
// too long for it.
template <class T>
bool launch_pcr_thomas_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s);
// Register-packed reduction (K rows per thread); false on periodic axes or lines longer
// than 4096 rows.
template <class T>
bool launch_register_cr_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s);
// cuSPARSE gtsv2StridedBatch baseline; false on periodic axes (no cyclic form).
template <class T>
bool launch_cusparse_x(const OperatorView<T>& op, T tau, T* d, int device, cudaStream_t s);

// x lines through the tridiag library (line_solve_x_tridiag.cu). Generated rows: the
// library's register base kernel with rows from the point rules; false (nothing launched)
// on periodic axes or lines longer than 4096 rows.
template <class T>
bool launch_tridiag_generated_x(const OperatorView<T>& op, T tau, T* d, cudaStream_t s);
// Coefficient arrays: writes the rows of every x line into grid-sized a, b, c (a[0] and
// c[n-1] of each line are the cyclic corners on a periodic axis), and solves the batch with
// them by tridiag::solve_cuda, whose stream-ordered workspace holds
// tridiag_arrays_workspace elements (periodic axes only).
template <class T>
void launch_x_coefficients(const OperatorView<T>& op, T tau, T* a, T* b, T* c, cudaStream_t s);
template <class T>
std::size_t tridiag_arrays_workspace(const OperatorView<T>& op);
template <class T>
void launch_tridiag_arrays_x(const OperatorView<T>& op, const T* a, const T* b, const T* c, T* d,
                             cudaStream_t s);

// Norms of x - y into result[0..kNormValues-1] = {sum of squares, max |.|, sum, sum of
// |.|} (Norms' order): one kernel, one atomic per block; the last block reduces the
// per-block partials (deterministic).
constexpr int kNormValues = 4;
struct NormScratch {
  double* partials;    // kNormValues * max_blocks
  unsigned* counter;   // zero before and after each call
  double* result;      // kNormValues
  int max_blocks;
};
template <class T>
void launch_difference_norms(const T* x, const T* y, std::size_t n, const NormScratch& s,
                             cudaStream_t stream);
// The sum of x y into s.result[2] (the norms' "sum" slot), by the same reduction.
template <class T>
void launch_dot(const T* x, const T* y, std::size_t n, const NormScratch& s, cudaStream_t stream);

// The largest ratio of x or y neighbours' alpha (n nodes, rows of nx, planes of nx ny):
// one value a block into block_max, in_plane_jump_blocks(n) of them.
int in_plane_jump_blocks(std::size_t n);
template <class T>
void launch_in_plane_jump(const T* alpha, int nx, int ny, std::size_t n, double* block_max, cudaStream_t stream);
// sums[k] = the sum of plane k of x (`plane` values a plane), in double.
template <class T>
void launch_plane_sums(const T* x, std::size_t plane, std::size_t planes, double* sums, cudaStream_t stream);

template <class T>
void launch_fill(T* x, T value, std::size_t n, cudaStream_t s);
template <class T>
void launch_add_constant(T* x, double value, std::size_t n, cudaStream_t s);
template <class T>
void launch_axpy(T a, const T* x, T* y, std::size_t n, cudaStream_t s);
template <class T>
void launch_multiply(const T* scale, T* x, std::size_t n, cudaStream_t s);
// scale = sqrt(layer[k] / alpha) on plane k; layer: device memory, one value a plane.
template <class T>
void launch_layer_scaling(const T* alpha, const T* layer, std::size_t plane, std::size_t planes, T* scale,
                          cudaStream_t s);
// y = T(a x + b y) from x of the other precision, in double (b = 0: y is not read).
template <class T>
void launch_axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n, cudaStream_t s);
// The fused slab step's ghost values into its z pass's data: for every line q,
//   d_lo[q] += s_lo sum_j below[j] g_j[q],  d_hi[q] += s_hi sum_j above[j] g_j[q],
// j < 2 ranks, g_j rank j/2's y_F (j even) or y_L plane in the gathered messages (`size`
// values each, ReducedLines layout); a null d is left out (reduced_combination).
template <class T>
void launch_add_ghost_couplings(const T* gathered, std::size_t size, std::size_t plane, int ranks, const T* below,
                                const T* above, T s_lo, T* d_lo, T s_hi, T* d_hi, cudaStream_t s);
// out[i] = sum over b < blocks of in[b n + i], in order (the fused slab step's partial sums).
template <class T>
void launch_sum_blocks(const T* in, int blocks, std::size_t n, T* out, cudaStream_t s);
// false where the kernel takes no such rank count (the caller then solves on the host).
template <class T>
bool launch_solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above, cudaStream_t s);
template <class T>
void launch_add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                               std::size_t plane, std::size_t planes, cudaStream_t s);
template <class T>
void launch_set_face(const Grid3& grid, int face, const T* values, T* field, cudaStream_t s);
// field *= factor on the nodes of face `face` (face_layout.hpp).
template <class T>
void launch_scale_face(const Grid3& grid, int face, T factor, T* field, cudaStream_t s);
template <class T>
void launch_face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau,
                                   const T* in, T* out, cudaStream_t s);
template <class T>
void launch_robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g, cudaStream_t s);

// The material index of an alpha field on the device (material_index.cu): its distinct
// values, up to slot_count of them (slot_count values means there may be more), then each
// node's byte against those values, in rows of `pitch` bytes.
template <class T>
std::vector<T> launch_collect_values(const T* alpha, std::size_t n, int slot_count, cudaStream_t s);
template <class T>
Array<std::uint8_t> launch_material_index(const T* alpha, const std::array<int, 3>& n, int pitch,
                                          const std::vector<T>& values, cudaStream_t s);

// Device memory with an owner: cudaMalloc, or a CudaError/BackendUnavailable that says
// how much was asked for and how much is free.
template <class T>
Array<T> device_allocate(std::size_t n);

template <class T>
class CudaBackend final : public Backend<T> {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  BackendKind kind() const override { return BackendKind::cuda; }
  std::string description() const override;
  int device() const override { return device_; }

  Array<T> allocate(std::size_t n) override;
  void upload(const T* host, T* dst, std::size_t n) override;
  bool reads_material_index() const override { return policy_.material_index; }
  Array<std::uint8_t> upload_bytes(const std::uint8_t* host, std::size_t n) override;
  bool index_materials(const T* alpha, const std::array<int, 3>& n, int pitch, int max_values, std::vector<T>& values,
                       Array<std::uint8_t>& index) override;
  void download(const T* src, T* host, std::size_t n) override;
  // Pinned host memory, and downloads into it on the backend's stream (cuda_staging.cu).
  Array<T> allocate_host_staging(std::size_t n) override;
  std::unique_ptr<PendingDownload> start_download(const T* src, T* host, std::size_t n) override;
  void fill(T* x, T value, std::size_t n) override;
  void add_constant(T* x, double value, std::size_t n) override;
  void operator_rhs(const OperatorView<T>& op, const T* u, const T* f, const FaceData<T>& neumann,
                    T scale, T* r) override;
  void fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base, T* f) override;
  void solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) override;
  void set_face(const Grid3& grid, int face, const T* values, T* field) override;
  void scale_face(const Grid3& grid, int face, T factor, T* field) override;
  void robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) override;
  void face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau, const T* in,
                              T* out) override;
  void axpy(T a, const T* x, T* y, std::size_t n) override;
  void axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) override;
  void add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                          std::size_t plane, std::size_t planes) override;
  void copy(const T* src, T* dst, std::size_t n) override;
  void multiply(const T* s, T* x, std::size_t n) override;
  void layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) override;
  std::vector<double> plane_sums(const T* x, std::size_t plane, std::size_t planes) override;
  double in_plane_jump(const T* alpha, const std::array<int, 3>& n) override;
  void solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above) override;
  Norms difference_norms(const T* x, const T* y, std::size_t n) override;
  double dot(const T* x, const T* y, std::size_t n) override;
  void synchronize() override;
  bool fused_douglas_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau,
                          T* scratch) override;
  bool fuses_douglas_step(const OperatorView<T>& op) override;
  bool fused_slab_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* scratch,
                       SlabCoupling<T>& coupling) override;
  std::unique_ptr<SpectralSolve<T>> make_spectral_solve(const OperatorView<T>& op,
                                                        const SpectralLayers<T>& layers) override;

  const CudaPolicy& policy() const { return policy_; }
  // The variants the last operator_rhs and the last x-line solve ran: the policy's, or
  // the one it handed the work to (for labels that say what was timed).
  StencilVariant last_stencil() const { return last_stencil_; }
  XSolveVariant last_x_solve() const { return last_x_solve_; }
  // Whether the last y or z line solve ran by a warp per line (the tile kernels).
  bool last_yz_by_warp() const { return last_yz_by_warp_; }
  // Whether the last fused step ran its x and y passes as one kernel (CudaPolicy::fused_xy).
  bool last_fused_xy() const { return fused_.last_merged_xy(); }
  bool last_variable_x_pass() const { return fused_.last_variable_x_pass(); }
  cudaStream_t stream() const { return stream_; }  // for timing with events (bench)
  CUstream_st* cuda_stream() override { return stream_; }
  void set_policy(const CudaPolicy& p) { policy_ = p; }

 private:
  void activate() const;  // makes device_ current for this host thread
  // One reduction (launch(scratch) on the stream) and its kNormValues results, waited for.
  template <class Launch>
  std::array<double, kNormValues> reduce(Launch launch);
  // The `count` doubles a kernel that launch(out) queues writes to out, on the host.
  template <class Launch>
  std::vector<double> doubles_from(std::size_t count, Launch launch);
  T* line_scratch(std::size_t n);
  // The x lines by the policy's variant or the one it hands them to; thread_thomas where
  // none took them (nothing launched).
  XSolveVariant launch_x_lines(const OperatorView<T>& op, T tau, T* d);

  int device_;
  cudaStream_t stream_ = nullptr;
  CudaPolicy policy_{};
  StencilVariant last_stencil_ = CudaPolicy{}.stencil;
  XSolveVariant last_x_solve_ = CudaPolicy{}.x_solve;
  bool last_yz_by_warp_ = false;
  std::string name_;
  // Thomas factors of the constant-coefficient path, per axis, kept while the operator
  // and tau stay the same (a time loop with a fixed step forms them once).
  struct ConstantFactors {
    bool valid = false;
    LineMatrixKey<T> key{};
    T tau{};
    Array<T> coef;
  };
  T* constant_factors(const OperatorView<T>& op, int axis, T tau, bool& ready);

  ConstantFactors factors_[3];
  // Coefficient arrays of the tridiag x solve (a, b, c back to back), allocated on first use
  // and kept while a constant-alpha operator and tau stay the same; rows from an alpha
  // field are regenerated every call (a freed and reallocated field can reuse an address).
  // Null when the device lacks the memory (the caller then takes PCR-Thomas).
  struct XCoefficients {
    bool valid = false;
    int n[3] = {0, 0, 0};
    LineMatrixKey<T> key{};
    T tau{};
    Array<T> abc;
  };
  T* x_coefficients(const OperatorView<T>& op, T tau);
  XCoefficients x_coef_;
  Array<T> scratch_;          // line-solve scratch, grown on demand
  Array<double> norm_buf_;    // partials + result
  Array<unsigned> counter_;   // last-block-done counter for the norm reduction
  int norm_blocks_ = 0;
  FusedDouglasStep<T> fused_;  // shared Thomas factors of the fused step
  WarpLineSolve<T> warp_lines_;  // warp-per-line solves: y and z (tiles), x of constant alpha
};

}  // namespace adi3d::cuda
