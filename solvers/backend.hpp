#pragma once
// The operations every backend implements. Algorithms (the Douglas step, the Poisson
// iteration) are written once against this interface; solvers/cpu and solvers/cuda
// provide it. Pointers passed to these operations are backend memory from allocate().
#include "solvers/array.hpp"
#include "solvers/distributed/reduced_system.hpp"
#include "solvers/distributed/slab_coupling.hpp"
#include "solvers/grid.hpp"
#include "solvers/operator_view.hpp"
#include "solvers/poison.hpp"
#include "solvers/spectral_solve.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

struct CUstream_st;  // cudaStream_t, opaque: this header has no CUDA dependency

namespace adi3d {

enum class BackendKind { cpu, cuda };

// Thrown when a backend was not compiled into this binary, or cannot run here.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Norms {
  double sum_squares = 0;  // sum of squared entries
  double max_abs = 0;      // largest absolute entry
  double sum = 0;          // plain sum (means, compatibility checks)
  double sum_abs = 0;      // sum of absolute entries (the scale of a mean)
};

// Neumann data: outward normal derivative on each face (backend memory, face layout as in
// face_layout.hpp), null where the face is not Neumann or the data is zero.
template <class T>
using FaceData = std::array<const T*, 6>;

// float for double and double for float: the precision a mixed-precision solve pairs with T.
template <class T>
using OtherPrecision = std::conditional_t<std::is_same_v<T, float>, double, float>;

// A download in flight (Backend::start_download).
class PendingDownload {
 public:
  virtual ~PendingDownload() = default;
  // Returns once the host buffer holds the values; any thread may wait (the snapshot
  // writer does). Throws where the copy failed.
  virtual void wait() = 0;
};

// A download that was done before start_download returned.
class FinishedDownload final : public PendingDownload {
 public:
  void wait() override {}
};

template <class T>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string description() const = 0;
  // The CUDA device the backend runs on (0 for the CPU).
  virtual int device() const { return 0; }
  // The CUDA stream that orders the backend's work (null on the CPU): kernels launched
  // from elsewhere (run-time compiled formulas) join it instead of synchronising.
  virtual CUstream_st* cuda_stream() { return nullptr; }

  virtual Array<T> allocate(std::size_t n) = 0;
  virtual void upload(const T* host, T* dst, std::size_t n) = 0;
  virtual void download(const T* src, T* host, std::size_t n) = 0;
  // Host memory to stage downloads in (snapshots keep a few and reuse them): page-locked on
  // CUDA, so that a download runs at the link's speed and without the host waiting for it;
  // ordinary memory on the CPU. The Array frees it; it may outlive the backend.
  virtual Array<T> allocate_host_staging(std::size_t n) {
    T* p = n ? new T[n] : nullptr;
    poison_host(p, n * sizeof(T));
    return Array<T>(p, n, [](T* q) { delete[] q; });
  }
  // Starts copying n values of backend memory to `host` (memory from
  // allocate_host_staging) and returns, where the backend can, before the copy ends. The
  // backend's later work is ordered after the copy (src may be overwritten by the next
  // step); the values are in `host` once the result's wait() returns. Here: download().
  virtual std::unique_ptr<PendingDownload> start_download(const T* src, T* host, std::size_t n) {
    download(src, host, n);
    return std::make_unique<FinishedDownload>();
  }
  virtual void fill(T* x, T value, std::size_t n) = 0;
  // x = T(x + value), the sum in double (as a host loop over doubles rounds it).
  virtual void add_constant(T* x, double value, std::size_t n) = 0;
  // Whether the backend's kernels read an alpha field's material index
  // (OperatorView::material); the stepper then builds one where the field has few values
  // and hands it over through upload_bytes.
  virtual bool reads_material_index() const { return false; }
  virtual Array<std::uint8_t> upload_bytes(const std::uint8_t* /*host*/, std::size_t /*n*/) {
    throw std::logic_error(description() + " keeps no material index");
  }
  // The material index of an alpha field in backend memory (n nodes per axis; layout of
  // material_index.hpp, rows of `pitch` bytes), built where the field is: its distinct
  // values in `values` (any order) and each node's byte in `index`; more than max_values
  // values leave values.size() > max_values and no index. False where the backend builds
  // none: every backend that reads an index builds it.
  virtual bool index_materials(const T* /*alpha*/, const std::array<int, 3>& /*n*/, int /*pitch*/,
                               int /*max_values*/, std::vector<T>& /*values*/, Array<std::uint8_t>& /*index*/) {
    return false;
  }

  // r = scale * (A u + f + Neumann terms) on unknown nodes, 0 on Dirichlet nodes.
  // f may be null (no source).
  virtual void operator_rhs(const OperatorView<T>& op, const T* u, const T* f,
                            const FaceData<T>& neumann, T scale, T* r) = 0;
  // f = base + Neumann terms (base null: 0) on the unknown nodes of the Neumann faces that
  // have data, as operator_rhs(0, base, neumann, 1) makes them there (the same sums, so the
  // same bits); every other node keeps f. base may be f. The stepper's fold of Neumann data
  // into the source of the fused step: work of the data's faces, so that data that moves
  // folds every step.
  virtual void fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base, T* f) = 0;
  // g = h (u_inf - u) / alpha on the nodes of Robin face `face` (face layout; h from op's
  // robin_h_field or robin_h, alpha at the node; u_inf null: 0): the outward derivative
  // that carries the face's flux as Neumann data, from u as it is now.
  virtual void robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) = 0;
  // Solves (I - tau A_axis) x = d in place for every grid line along the axis; rows on
  // Dirichlet faces of that axis are identity rows; periodic axes are cyclic systems.
  virtual void solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) = 0;
  // Writes one face plane of a grid field from face-layout values (backend memory).
  virtual void set_face(const Grid3& grid, int face, const T* values, T* field) = 0;
  // field *= factor on the nodes of one face.
  virtual void scale_face(const Grid3& grid, int face, T factor, T* field) = 0;
  // out = (I - tau A_axis) in for face arrays of `face` along one of its tangential axes
  // (tangential_factor in discretization.hpp); in and out must not overlap.
  virtual void face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau,
                                      const T* in, T* out) = 0;
  // y += a x
  virtual void axpy(T a, const T* x, T* y, std::size_t n) = 0;
  // y = T(a x + b y) from x of the other precision, in double; b = 0 writes y without
  // reading it. x is memory of a backend of the same kind on the same device (the two
  // precisions of a mixed-precision Poisson solve, poisson_mixed.hpp: a double residual
  // into a float source, a float correction added to a double solution), whose work on x
  // is complete (its synchronize()).
  virtual void axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) = 0;
  // The partition method's coupling terms (solvers/distributed): for k < planes, i < plane,
  //   x[k plane + i] += y[k plane + i] + v_k,i a[i] + w_k,i b[i]
  // with v_k,i = v[k plane + i] where per_node, else v[k] (w likewise): planes a and b
  // broadcast along z. y, and v with a, and w with b may be null (left out). With y, one
  // pass both corrects a line solve and applies it to u.
  virtual void add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                                  std::size_t plane, std::size_t planes) = 0;
  // dst = src (n values; no overlap).
  virtual void copy(const T* src, T* dst, std::size_t n) = 0;
  // x *= s, value by value (a diagonal scaling).
  virtual void multiply(const T* s, T* x, std::size_t n) = 0;
  // s = sqrt(layer_alpha[k] / alpha) on every node of plane k (`plane` nodes a plane, one
  // layer value a plane): the scaling that leaves the layered direct solve only the
  // variation of alpha inside planes to miss (poisson_krylov.hpp).
  virtual void layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) = 0;
  // The largest ratio (>= 1) of the alpha values of neighbouring nodes along x or y (a
  // positive field of n nodes per axis, x fastest; 1 where there are no such neighbours):
  // how sharply alpha jumps inside planes.
  virtual double in_plane_jump(const T* alpha, const std::array<int, 3>& n) = 0;
  // The sum of x over each of `planes` consecutive planes of `plane` values, in double.
  virtual std::vector<double> plane_sums(const T* x, std::size_t plane, std::size_t planes) {
    std::vector<double> sums(planes);
    for (std::size_t k = 0; k < planes; ++k) sums[k] = difference_norms(x + k * plane, nullptr, plane).sum;
    return sums;
  }
  // The partition method's reduced systems of every line (reduced_system.hpp), from every
  // rank's message in backend memory; x_below and x_above take a plane each.
  virtual void solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above) = 0;
  // Norms of x - y (y may be null: norms of x).
  virtual Norms difference_norms(const T* x, const T* y, std::size_t n) = 0;
  // The sum of x y, in double (a Krylov solve's inner products, poisson_krylov.hpp); NaN
  // where a term is NaN.
  virtual double dot(const T* x, const T* y, std::size_t n) = 0;
  // Blocks until queued work is done (no-op on the CPU).
  virtual void synchronize() = 0;
  // One whole Douglas step u += du in a few fused passes (rhs dt (A u + f) formed inside
  // the x solve, update inside the z solve), where the backend has such a path for this
  // operator; f may be null, scratch is grid-sized. Returns false, having done nothing,
  // where it does not apply: the caller then runs the step operation by operation.
  virtual bool fused_douglas_step(const OperatorView<T>& /*op*/, T* /*u*/, const T* /*f*/,
                                  T /*dt*/, T /*tau*/, T* /*scratch*/) {
    return false;
  }
  // Whether fused_douglas_step may take this operator (it may still decline), so that a
  // caller knows whether shaping its inputs for it is worth the trouble.
  virtual bool fuses_douglas_step(const OperatorView<T>& /*op*/) { return false; }
  // fused_douglas_step on one slab of a split z axis (slab_coupling.hpp; op: the slab's
  // operator, u's ghost planes filled): the z pass takes its ghost rows' values from the
  // partition method's reduced systems, which `coupling` gathers, so that the step moves
  // the arrays of the one-device step. Returns false, having done nothing, where the backend
  // has no such path for this operator (the caller then couples the z lines itself).
  virtual bool fused_slab_step(const OperatorView<T>& /*op*/, T* /*u*/, const T* /*f*/, T /*dt*/, T /*tau*/,
                               T* /*scratch*/, SlabCoupling<T>& /*coupling*/) {
    return false;
  }
  // A direct solver of -A e = r for op (spectral_solve.hpp), where the backend has one and
  // spectral_obstacle finds nothing in op; null where it has none (a split z axis). With
  // layers (alpha of z alone) op's alpha field is ignored for layers.alpha.
  virtual std::unique_ptr<SpectralSolve<T>> make_spectral_solve(const OperatorView<T>& /*op*/,
                                                                const SpectralLayers<T>& /*layers*/) {
    return nullptr;
  }
};

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend();
template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int device);  // throws BackendUnavailable

bool cuda_compiled();
int cuda_device_count();  // 0 when not compiled or no device/driver
std::string cuda_device_summary();

}  // namespace adi3d
