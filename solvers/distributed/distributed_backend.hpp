#pragma once
// A backend for one rank of a run split into z slabs (slab_decomposition.hpp): every
// operation runs on the rank's own backend (CPU or CUDA) over its slab, and this class adds
// what couples the slabs, below the Backend seam, so that the Douglas step and the Poisson
// iteration run unchanged on any number of ranks:
//   - the stencil's ghost planes: each operator_rhs first takes the neighbours' planes of u;
//   - z lines by the partition method: each rank solves its part of every line with its
//     ghost rows as zero Dirichlet rows (y), and with a unit value in each ghost row (the
//     coupling responses v and w); the first and last rows of y, v and w of every rank
//     travel in one allgather, every rank solves the reduced system of 2 unknowns per rank
//     and line, and finishes x = y + v x_below + w x_above;
//   - norms over the owned planes, summed over the ranks.
// Planes and interface rows move by NCCL between GPUs, by MPI through host memory for the
// CPU backend (device_exchange.hpp); the reduced systems are solved where the data is (a
// kernel on the GPU), so nothing of a step passes through host memory on GPUs.
// Grid arrays of this backend are the slab's arrays, ghost planes included; their ghost
// planes belong to this class.
#include "solvers/backend.hpp"
#include "solvers/discretization.hpp"
#include "solvers/distributed/communicator.hpp"
#include "solvers/distributed/device_exchange.hpp"
#include "solvers/distributed/slab_decomposition.hpp"

#include <memory>
#include <vector>

namespace adi3d {

// Time spent in the exchanges of a distributed backend (seconds, since it was made), where
// it times them (set_timing).
struct CommunicationTimes {
  double halo = 0;     // ghost planes of the stencil
  double reduced = 0;  // the reduced systems of the z lines (gather and solve)
  double waiting = 0;  // what of `reduced` the step waited for (all, unless a fused slab step overlapped it)
  // Fused slab steps: from the x pass's end to the interface sums solved (reduced: to every
  // rank's gathered).
  double sums = 0;
};

template <class T>
class DistributedBackend final : public Backend<T> {
 public:
  DistributedBackend(std::unique_ptr<Backend<T>> local, const SlabDecomposition& slab, Communicator& comm);
  ~DistributedBackend() override;

  BackendKind kind() const override { return local_->kind(); }
  std::string description() const override;
  int device() const override { return local_->device(); }
  CUstream_st* cuda_stream() override { return local_->cuda_stream(); }

  Array<T> allocate(std::size_t n) override { return local_->allocate(n); }
  void upload(const T* host, T* dst, std::size_t n) override { local_->upload(host, dst, n); }
  void download(const T* src, T* host, std::size_t n) override { local_->download(src, host, n); }
  Array<T> allocate_host_staging(std::size_t n) override { return local_->allocate_host_staging(n); }
  std::unique_ptr<PendingDownload> start_download(const T* src, T* host, std::size_t n) override {
    return local_->start_download(src, host, n);
  }
  void fill(T* x, T value, std::size_t n) override { local_->fill(x, value, n); }
  void add_constant(T* x, double value, std::size_t n) override { local_->add_constant(x, value, n); }
  bool reads_material_index() const override { return local_->reads_material_index(); }
  Array<std::uint8_t> upload_bytes(const std::uint8_t* host, std::size_t n) override {
    return local_->upload_bytes(host, n);
  }
  bool index_materials(const T* alpha, const std::array<int, 3>& n, int pitch, int max_values, std::vector<T>& values,
                       Array<std::uint8_t>& index) override {
    return local_->index_materials(alpha, n, pitch, max_values, values, index);
  }

  void operator_rhs(const OperatorView<T>& op, const T* u, const T* f, const FaceData<T>& neumann, T scale,
                    T* r) override;
  void fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base, T* f) override {
    local_->fold_neumann_terms(op, neumann, base, f);
  }
  void solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) override;
  void set_face(const Grid3& grid, int face, const T* values, T* field) override {
    local_->set_face(grid, face, values, field);
  }
  void scale_face(const Grid3& grid, int face, T factor, T* field) override {
    local_->scale_face(grid, face, factor, field);
  }
  void robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) override {
    local_->robin_data(op, face, u_inf, u, g);
  }
  void face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau, const T* in,
                              T* out) override {
    local_->face_tangential_factor(op, face, axis, tau, in, out);
  }
  void axpy(T a, const T* x, T* y, std::size_t n) override { local_->axpy(a, x, y, n); }
  void axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) override {
    local_->axpby_converted(a, x, b, y, n);
  }
  void add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                          std::size_t plane, std::size_t planes) override {
    local_->add_coupling_terms(y, v, a, w, b, per_node, x, plane, planes);
  }
  void copy(const T* src, T* dst, std::size_t n) override { local_->copy(src, dst, n); }
  void multiply(const T* s, T* x, std::size_t n) override { local_->multiply(s, x, n); }
  void layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) override {
    local_->layer_scaling(alpha, layer_alpha, plane, s);
  }
  // This rank's planes.
  double in_plane_jump(const T* alpha, const std::array<int, 3>& n) override { return local_->in_plane_jump(alpha, n); }
  // This rank's planes (as the norms of arrays other than grid arrays).
  std::vector<double> plane_sums(const T* x, std::size_t plane, std::size_t planes) override {
    return local_->plane_sums(x, plane, planes);
  }
  void solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above) override {
    local_->solve_reduced_lines(lines, messages, x_below, x_above);
  }
  // Norms of grid arrays: over the owned planes of every rank. Other lengths (face arrays)
  // are this rank's alone.
  Norms difference_norms(const T* x, const T* y, std::size_t n) override;
  double dot(const T* x, const T* y, std::size_t n) override;
  void synchronize() override { local_->synchronize(); }
  // A split z axis: the local backend's fused slab step (7 arrays a point, as the
  // one-device fused step, the reduced systems solved beside the y pass) where it has one
  // for op and the exchange queues on its streams; else the step's rhs, x and y solves as
  // operations, then the partitioned z solve and the update of u in one pass (11 arrays).
  // Without a split, the local backend's.
  bool fused_douglas_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* scratch) override;
  bool fuses_douglas_step(const OperatorView<T>& op) override;

  // Fills the ghost planes of a grid array with the neighbours' owned planes.
  void exchange_ghosts(T* field);
  const SlabDecomposition& slab() const { return slab_; }
  Communicator& communicator() { return comm_; }
  const CommunicationTimes& times() const { return times_; }
  // Whether the exchanges are timed (times()): a synchronisation before and after each,
  // which costs a step some latency; off until set.
  void set_timing(bool on) { timing_ = on; }
  // Whether the last fused_douglas_step was the local backend's fused slab step.
  bool last_step_fused_slab() const { return last_fused_slab_; }
  // How planes travel between ranks ("NCCL", "MPI through host memory").
  std::string transport() const { return exchange_->name(); }

 private:
  bool z_split() const { return slab_.ghost_lo || slab_.ghost_hi; }
  // The reduced systems' layout, this rank solving.
  ReducedLines reduced_lines(bool per_line) const;
  class Coupling;  // the SlabCoupling of the local backend's fused slab step
  // d := the z solve of d; or, with `update`, update += that solve (d then holds the local
  // solve only).
  void solve_z_partitioned(const OperatorView<T>& op, T tau, T* d, T* update = nullptr);
  // The coupling responses of constant-alpha lines (every line the same): v (unit lower
  // ghost) and w (unit upper ghost) at each local plane, on the host and in backend
  // memory, cached per line matrix (tau and the z coefficients).
  struct Responses {
    T tau;
    LineMatrixKey<T> key;
    std::vector<T> v, w;
    Array<T> backend_v, backend_w;
  };
  const Responses& column_responses(const OperatorView<T>& op, T tau);

  std::unique_ptr<Backend<T>> local_;
  SlabDecomposition slab_;
  Communicator& comm_;
  std::unique_ptr<DeviceExchange<T>> exchange_;
  std::vector<Responses> responses_;
  Array<T> message_, gathered_;            // interface rows: this rank's, every rank's
  Array<T> field_v_, field_w_, corrections_;  // alpha fields: per-line responses; x_below, x_above
  CommunicationTimes times_;
  bool timing_ = false;
  bool last_fused_slab_ = false;
  std::unique_ptr<SlabCoupling<T>> coupling_;
};

}  // namespace adi3d
