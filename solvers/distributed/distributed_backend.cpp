#include "solvers/distributed/distributed_backend.hpp"

#include "solvers/cpu/line_factors.hpp"
#include "solvers/distributed/reduced_system.hpp"
#include "solvers/nan_norms.hpp"

#include <chrono>
#include <string>
#include <utility>

namespace adi3d {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

template <class T>
class DistributedBackend<T>::Coupling final : public SlabCoupling<T> {
 public:
  explicit Coupling(DistributedBackend& b) : b_(b) {}
  bool ghost_lo() const override { return b_.slab_.ghost_lo > 0; }
  bool ghost_hi() const override { return b_.slab_.ghost_hi > 0; }
  int row_first() const override { return b_.slab_.ghost_lo; }
  int row_last() const override { return b_.slab_.local.n[2] - 1 - b_.slab_.ghost_hi; }
  ReducedLines lines() const override { return b_.reduced_lines(false); }
  void gather(const T* message, T* gathered, CUstream_st* stream) override {
    b_.exchange_->allgather_on(message, gathered, lines().message_size(), stream);
  }
  bool timed() const override { return b_.timing_; }
  void record(const SlabStepTimes& t) override {
    b_.times_.sums += t.sums;
    b_.times_.reduced += t.reduced;
    b_.times_.waiting += t.waited;
  }

 private:
  DistributedBackend& b_;
};

template <class T>
DistributedBackend<T>::DistributedBackend(std::unique_ptr<Backend<T>> local, const SlabDecomposition& slab,
                                          Communicator& comm)
    : local_(std::move(local)),
      slab_(slab),
      comm_(comm),
      exchange_(make_device_exchange(*local_, comm)),
      coupling_(std::make_unique<Coupling>(*this)) {}

template <class T>
ReducedLines DistributedBackend<T>::reduced_lines(bool per_line) const {
  ReducedLines layout;
  layout.plane = slab_.plane();
  layout.per_line = per_line;
  layout.ranks = slab_.ranks;
  layout.me = slab_.rank;
  layout.periodic = slab_.whole_bc.periodic(2);
  return layout;
}

template <class T>
DistributedBackend<T>::~DistributedBackend() = default;

template <class T>
std::string DistributedBackend<T>::description() const {
  return local_->description() + ", rank " + std::to_string(slab_.rank) + " of " + std::to_string(slab_.ranks) +
         " (z planes " + std::to_string(slab_.k_begin) + "-" + std::to_string(slab_.k_end - 1) + ")";
}

template <class T>
void DistributedBackend<T>::exchange_ghosts(T* field) {
  if (!z_split()) return;
  if (timing_) local_->synchronize();  // the kernels before count as computing
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t plane = slab_.plane();
  const std::size_t last_ghost = static_cast<std::size_t>(slab_.local.n[2] - 1) * plane;
  // The first owned plane goes down into the lower neighbour's upper ghost, the last owned
  // plane up into the upper neighbour's lower ghost.
  exchange_->exchange(slab_.rank_below, field + plane, field, slab_.rank_above, field + last_ghost - plane,
                      field + last_ghost, plane);
  if (!timing_) return;
  local_->synchronize();
  times_.halo += seconds_since(t0);
}

template <class T>
void DistributedBackend<T>::operator_rhs(const OperatorView<T>& op, const T* u, const T* f,
                                         const FaceData<T>& neumann, T scale, T* r) {
  // The ghost planes of every grid array are this class's to fill (see the header).
  exchange_ghosts(const_cast<T*>(u));
  local_->operator_rhs(op, u, f, neumann, scale, r);
}

template <class T>
void DistributedBackend<T>::solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) {
  if (axis != 2 || !z_split()) {
    local_->solve_lines(op, axis, tau, d);
    return;
  }
  solve_z_partitioned(op, tau, d);
}

template <class T>
const typename DistributedBackend<T>::Responses& DistributedBackend<T>::column_responses(const OperatorView<T>& op,
                                                                                         T tau) {
  const LineMatrixKey<T> key = line_matrix_key(op, 2);
  for (const Responses& r : responses_)
    if (r.tau == tau && r.key == key) return r;
  // One z line of the slab (constant alpha: every line has this matrix), solved on the host
  // with the factors the CPU backend sweeps with, for a unit value in each ghost row.
  OperatorView<T> column = op;
  column.n[0] = column.n[1] = 1;
  column.alpha_field = nullptr;
  column.material = nullptr;
  const LineFactors<T> factors = factor_line(column, 2, tau);
  const int nl = op.n[2];
  Responses r{tau, key, std::vector<T>(nl, T(0)), std::vector<T>(nl, T(0)), {}, {}};
  T scratch = 0;
  if (slab_.ghost_lo) {
    r.v[0] = T(1);
    cpu::solve_factored(factors, 1, r.v.data(), 1, &scratch);
  }
  if (slab_.ghost_hi) {
    r.w[nl - 1] = T(1);
    cpu::solve_factored(factors, 1, r.w.data(), 1, &scratch);
  }
  r.backend_v = local_->allocate(nl);
  r.backend_w = local_->allocate(nl);
  local_->upload(r.v.data(), r.backend_v.data(), nl);
  local_->upload(r.w.data(), r.backend_w.data(), nl);
  if (responses_.size() >= 32) responses_.erase(responses_.begin());
  responses_.push_back(std::move(r));
  return responses_.back();
}

template <class T>
void DistributedBackend<T>::solve_z_partitioned(const OperatorView<T>& op, T tau, T* d, T* update) {
  const std::size_t plane = slab_.plane();
  const int nl = op.n[2];
  const int first = slab_.ghost_lo, last = nl - 1 - slab_.ghost_hi;
  const std::size_t n = slab_.local.size();
  auto at = [plane](T* base, int k) { return base + static_cast<std::size_t>(k) * plane; };

  // y: the local solve with the ghost rows as zero Dirichlet rows.
  if (slab_.ghost_lo) local_->fill(d, T(0), plane);
  if (slab_.ghost_hi) local_->fill(at(d, nl - 1), T(0), plane);
  local_->solve_lines(op, 2, tau, d);

  // v, w: the responses to a unit value in the lower and upper ghost row, the same for
  // every line with constant alpha, each line's own with an alpha field.
  const bool per_line = !lines_alike(op, 2) || op.z_lines_differ_elsewhere;
  const Responses* column = per_line ? nullptr : &column_responses(op, tau);
  if (per_line) {
    if (field_v_.size() != n) {
      field_v_ = local_->allocate(n);
      field_w_ = local_->allocate(n);
    }
    for (int side = 0; side < 2; ++side) {
      T* response = side == 0 ? field_v_.data() : field_w_.data();
      local_->fill(response, T(0), n);
      if (side == 0 ? slab_.ghost_lo : slab_.ghost_hi) {
        local_->fill(at(response, side == 0 ? 0 : nl - 1), T(1), plane);
        local_->solve_lines(op, 2, tau, response);
      }
    }
  }

  // (The kernels queued so far count as computing, not as the reduced systems' time.)
  if (timing_) local_->synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  // This rank's interface rows, in backend memory: y, v and w at its first and last owned row.
  const ReducedLines layout = reduced_lines(per_line);
  const std::size_t size = layout.message_size(), ranks = static_cast<std::size_t>(slab_.ranks);
  if (message_.size() != size) {
    message_ = local_->allocate(size);
    gathered_ = local_->allocate(size * ranks);
  }
  T* message = message_.data();
  local_->copy(at(d, first), message + layout.y_first(), plane);
  local_->copy(at(d, last), message + layout.y_last(), plane);
  if (per_line) {
    local_->copy(at(field_v_.data(), first), message + layout.v_first(), plane);
    local_->copy(at(field_v_.data(), last), message + layout.v_last(), plane);
    local_->copy(at(field_w_.data(), first), message + layout.w_first(), plane);
    local_->copy(at(field_w_.data(), last), message + layout.w_last(), plane);
  } else {
    const T coefficients[4] = {column->v[first], column->v[last], column->w[first], column->w[last]};
    local_->upload(coefficients, message + layout.v_first(), 4);
  }
  exchange_->allgather(message, gathered_.data(), size);

  // Every rank solves every line's reduced system and keeps what its ghosts need: the
  // last row of the rank below and the first row of the rank above.
  if (corrections_.size() != 2 * plane) corrections_ = local_->allocate(2 * plane);
  local_->solve_reduced_lines(layout, gathered_.data(), corrections_.data(), corrections_.data() + plane);
  if (timing_) {
    local_->synchronize();
    times_.reduced += seconds_since(t0);
    times_.waiting += seconds_since(t0);
  }

  // x = y + v x_below + w x_above on the owned rows, into d, or added to `update`.
  const T* x_below = corrections_.data();
  const T* x_above = corrections_.data() + plane;
  const std::size_t owned = static_cast<std::size_t>(last - first + 1);
  const T* v = !slab_.ghost_lo ? nullptr : per_line ? at(field_v_.data(), first) : column->backend_v.data() + first;
  const T* w = !slab_.ghost_hi ? nullptr : per_line ? at(field_w_.data(), first) : column->backend_w.data() + first;
  if (update)
    local_->add_coupling_terms(at(d, first), v, x_below, w, x_above, per_line, at(update, first), plane, owned);
  else
    local_->add_coupling_terms(nullptr, v, x_below, w, x_above, per_line, at(d, first), plane, owned);
}

template <class T>
Norms DistributedBackend<T>::difference_norms(const T* x, const T* y, std::size_t n) {
  if (n != slab_.local.size()) return local_->difference_norms(x, y, n);
  const std::size_t offset = slab_.owned_offset();
  Norms norms = local_->difference_norms(x + offset, y ? y + offset : nullptr, slab_.owned_size());
  double sums[3] = {norms.sum_squares, norms.sum, norms.sum_abs};
  double largest = norms.max_abs;
  comm_.allreduce_sum(sums, 3);
  comm_.allreduce_max(&largest, 1);
  return propagate_nan({sums[0], largest, sums[1], sums[2]});
}

template <class T>
double DistributedBackend<T>::dot(const T* x, const T* y, std::size_t n) {
  if (n != slab_.local.size()) return local_->dot(x, y, n);
  const std::size_t offset = slab_.owned_offset();  // ghost planes are another rank's
  double sum = local_->dot(x + offset, y + offset, slab_.owned_size());
  comm_.allreduce_sum(&sum, 1);
  return sum;
}

template <class T>
bool DistributedBackend<T>::fused_douglas_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau,
                                               T* scratch) {
  last_fused_slab_ = false;
  if (!z_split()) return local_->fused_douglas_step(op, u, f, dt, tau, scratch);
  exchange_ghosts(u);
  // (Ranks may take different paths: a middle rank has no moving face data, say. Both
  // exchange the same planes and messages in the same order.)
  if (exchange_->gathers_on_streams() && local_->fused_slab_step(op, u, f, dt, tau, scratch, *coupling_))
    return last_fused_slab_ = true;
  // The stepper folds Neumann data into f before it takes this path (as for the local
  // fused step): the rhs takes none.
  local_->operator_rhs(op, u, f, FaceData<T>{}, dt, scratch);
  local_->solve_lines(op, 0, tau, scratch);
  local_->solve_lines(op, 1, tau, scratch);
  solve_z_partitioned(op, tau, scratch, u);
  return true;
}

template <class T>
bool DistributedBackend<T>::fuses_douglas_step(const OperatorView<T>& op) {
  return z_split() || local_->fuses_douglas_step(op);
}

template class DistributedBackend<float>;
template class DistributedBackend<double>;

}  // namespace adi3d
