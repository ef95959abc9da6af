#include "solvers/douglas_step.hpp"

#include "solvers/discretization.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/fault_injection.hpp"

#include <stdexcept>
#include <utility>

namespace adi3d {

template <class T>
DouglasStepper<T>::DouglasStepper(Backend<T>& backend, const Diffusion<T>& diffusion,
                                  const Forcing<T>& forcing, double theta)
    : backend_(backend), diffusion_(diffusion), forcing_(forcing), theta_(theta) {
  const Grid3& g = diffusion.grid;
  if (!diffusion.alpha_field.empty()) {
    alpha_ = backend.allocate(g.size());
    backend.upload(diffusion.alpha_field.data(), alpha_.data(), g.size());
  }
  const T* alpha = diffusion.backend_alpha ? diffusion.backend_alpha : alpha_.data();
  op_ = make_operator_view(diffusion, alpha);
  if (alpha && backend.reads_material_index()) {
    materials_ = index_materials(backend, alpha, {g.n[0], g.n[1], g.n[2]});
    if (materials_.count > 0) materials_.attach(op_);
  }
  rhs_ = backend.allocate(g.size());
  if (forcing.has_source()) source_ = backend.allocate(g.size());
  for (int f = 0; f < 6; ++f) {
    if (diffusion.interface(f)) continue;  // the neighbour's planes: no data of its own
    const BoundaryKind kind = diffusion.bc.face[f];
    if (kind == BoundaryKind::neumann && !forcing.boundary_is_zero(f))
      neumann_[f] = backend.allocate(face_size(g, f));
    if (kind == BoundaryKind::robin) {
      robin_[f] = has_robin_ = true;
      neumann_[f] = backend.allocate(face_size(g, f));
      if (!forcing.boundary_is_zero(f)) ambient_[f] = backend.allocate(face_size(g, f));
      if (const std::optional<double> h = forcing.robin_h_constant(f)) {
        op_.robin_h[f] = static_cast<T>(*h);
      } else {
        robin_h_[f] = backend.allocate(face_size(g, f));
        op_.robin_h_field[f] = robin_h_[f].data();
      }
    }
    if (kind == BoundaryKind::dirichlet) {
      g_now_[f] = backend.allocate(face_size(g, f));
      face_moves_[f] = forcing.boundary_depends_on_time(f);
      dirichlet_moves_ = dirichlet_moves_ || face_moves_[f];
    }
  }
  for (int side = 0; side < 2; ++side) {
    const int f = face_index(2, side);
    if (diffusion.interface(f) && diffusion.whole_bc().face[f] == BoundaryKind::robin && !forcing.robin_h_constant(f))
      op_.z_lines_differ_elsewhere = true;
  }
  if (!dirichlet_moves_) return;
  for (int f = 0; f < 6; ++f) {
    if (!g_now_[f].data()) continue;
    const std::size_t m = face_size(g, f);
    increment_[f] = backend.allocate(m);
    if (!face_moves_[f]) {
      backend.fill(increment_[f].data(), T(0), m);  // fixed data: zero increments for good
      continue;
    }
    g_next_[f] = backend.allocate(m);
    if (f / 2 != 2) stage_[f] = backend.allocate(m);
  }
}

template <class T>
void DouglasStepper<T>::sample_face(int face, double t, T* dst, bool robin_h) {
  const bool on_backend = robin_h ? forcing_.robin_h_on_backend(face, t, dst, backend_)
                                  : forcing_.boundary_on_backend(face, t, dst, backend_);
  if (on_backend) return;
  host_face_.resize(face_size(diffusion_.grid, face));
  if (robin_h)
    forcing_.robin_h(face, t, host_face_.data());
  else
    forcing_.boundary(face, t, host_face_.data());
  backend_.upload(host_face_.data(), dst, host_face_.size());
}

template <class T>
void DouglasStepper<T>::sample_source(double t) {
  if (!forcing_.source_on_backend(t, source_.data(), backend_)) {
    host_source_.resize(diffusion_.grid.size());
    forcing_.source(t, host_source_.data());
    backend_.upload(host_source_.data(), source_.data(), host_source_.size());
  }
  source_folded_ = false;
}

template <class T>
void DouglasStepper<T>::load_forcing(double t) {
  const bool first = !forcing_loaded_;
  if (!first && t == forcing_time_) return;
  // (A fixed source that has taken Neumann terms is the forcing's no more: fold_neumann_data.)
  const bool source_moves = forcing_.has_source() && (first || forcing_.source_depends_on_time());
  if (source_moves) sample_source(t);
  bool data_moves = false;
  for (int f = 0; f < 6; ++f) {
    const bool moves = first || forcing_.boundary_depends_on_time(f);
    if (robin_[f]) {
      if (ambient_[f].data() && moves) sample_face(f, t, ambient_[f].data());
      if (robin_h_[f].data() && (first || forcing_.robin_h_depends_on_time(f))) sample_face(f, t, robin_h_[f].data(), true);
    } else if (neumann_[f].data() && moves) {
      sample_face(f, t, neumann_[f].data());
      data_moves = true;
    }
  }
  forcing_loaded_ = true;
  forcing_time_ = t;
  refold_ = refold_ || source_moves || data_moves;
}

template <class T>
void DouglasStepper<T>::update_face_data(const T* u) {
  for (int f = 0; f < 6; ++f)
    if (robin_[f]) backend_.robin_data(op_, f, ambient_[f].data(), u, neumann_[f].data());
  if (neumann_folded_ && (refold_ || has_robin_)) fold_into_source();
  refold_ = false;
}

template <class T>
void DouglasStepper<T>::fold_into_source() {
  // On the faces: the fixed source kept apart, the source just loaded (in place), or none.
  const bool in_place = !source_base_.data() && forcing_.has_source();
  // Folding twice into one sampling would add the terms twice: sample it again.
  if (in_place && source_folded_) sample_source(forcing_time_);
  const T* base = source_base_.data() ? source_base_.data() : in_place ? source_.data() : nullptr;
  backend_.fold_neumann_terms(op_, neumann_data(), base, source_.data());
  source_folded_ = in_place;
}

template <class T>
void DouglasStepper<T>::initialize(T* u, double t0) {
  // Faces in x, y, z order: the last written wins on shared edges.
  for (int f = 0; f < 6; ++f) {
    if (!g_now_[f].data()) continue;
    sample_face(f, t0, g_now_[f].data());
    backend_.set_face(diffusion_.grid, f, g_now_[f].data(), u);
  }
}

template <class T>
void DouglasStepper<T>::prepare_dirichlet_stages(double t_next, T tau) {
  const Grid3& g = diffusion_.grid;
  for (int f = 0; f < 6; ++f) {
    if (!face_moves_[f]) continue;
    const std::size_t m = face_size(g, f);
    T* dg = increment_[f].data();
    sample_face(f, t_next, g_next_[f].data());
    backend_.fill(dg, T(0), m);
    backend_.axpy(T(1), g_next_[f].data(), dg, m);
    backend_.axpy(T(-1), g_now_[f].data(), dg, m);
    const int axis = f / 2;
    if (axis == 1) backend_.face_tangential_factor(op_, f, 2, tau, dg, stage_[f].data());
    if (axis == 0) {
      // g_now_ is free until the step ends (it then takes g^{n+1}): the middle factor.
      backend_.face_tangential_factor(op_, f, 2, tau, dg, g_now_[f].data());
      backend_.face_tangential_factor(op_, f, 1, tau, g_now_[f].data(), stage_[f].data());
    }
  }
}

template <class T>
void DouglasStepper<T>::set_dirichlet_increments(T* field, int axis) {
  for (int side = 0; side < 2; ++side) {
    const int f = face_index(axis, side);
    if (!increment_[f].data()) continue;
    const T* stage = stage_[f].data() ? stage_[f].data() : increment_[f].data();
    backend_.set_face(diffusion_.grid, f, stage, field);
  }
}

template <class T>
FaceData<T> DouglasStepper<T>::neumann_data() const {
  FaceData<T> neumann{};
  for (int f = 0; f < 6; ++f) neumann[f] = neumann_[f].data();
  return neumann;
}

template <class T>
FaceData<T> DouglasStepper<T>::unfolded_neumann_data() const {
  return neumann_folded_ ? FaceData<T>{} : neumann_data();
}

template <class T>
bool DouglasStepper<T>::has_neumann_data() const {
  for (const Array<T>& face : neumann_)
    if (face.data()) return true;
  return false;
}

template <class T>
void DouglasStepper<T>::fold_neumann_data() {
  folding_tried_ = true;
  if (!backend_.fuses_douglas_step(op_)) return;
  // A Robin face's data moves with u.
  bool data_moves = has_robin_;
  for (int f = 0; f < 6; ++f) data_moves = data_moves || (neumann_[f].data() && forcing_.boundary_depends_on_time(f));
  const bool source_moves = forcing_.has_source() && forcing_.source_depends_on_time();
  const std::size_t n = diffusion_.grid.size();
  Array<T> zero_source, base;
  try {
    if (!source_.data()) zero_source = backend_.allocate(n);
    else if (data_moves && !source_moves) base = backend_.allocate(n);
  } catch (const BackendUnavailable&) {
    return;  // no room: the unfused step reads the faces' arrays as before
  }
  if (zero_source.data()) {
    backend_.fill(zero_source.data(), T(0), n);
    source_ = std::move(zero_source);
  }
  if (base.data()) {
    backend_.fill(base.data(), T(0), n);
    backend_.axpy(T(1), source_.data(), base.data(), n);
    source_base_ = std::move(base);
  }
  neumann_folded_ = true;
  source_folded_ = false;
  fold_into_source();
  // Data and source fixed: folded for good.
  if (!data_moves && !source_moves)
    for (auto& face : neumann_) face = Array<T>();
}

template <class T>
void DouglasStepper<T>::step(T* u, double t, double dt, Norms* rhs_norms) {
  if (fault_due(FaultKind::step)) throw std::runtime_error("the step failed (" + injected_fault_note() + ")");
  const Grid3& g = diffusion_.grid;
  const T tau = static_cast<T>(theta_ * dt);
  load_forcing(t + theta_ * dt);
  update_face_data(u);
  // Fixed Dirichlet data and no Neumann data (or only what has joined the source): the
  // backend may run the whole step fused.
  const bool fusable = !dirichlet_moves_ && !rhs_norms;
  if (fusable && !folding_tried_ && has_neumann_data()) fold_neumann_data();
  if (fusable && (neumann_folded_ || !has_neumann_data()) &&
      backend_.fused_douglas_step(op_, u, source_.data(), static_cast<T>(dt), tau, rhs_.data())) {
    ++fused_steps_;
    return;
  }

  if (dirichlet_moves_) prepare_dirichlet_stages(t + dt, tau);
  T* r = rhs_.data();
  backend_.operator_rhs(op_, u, source_.data(), unfolded_neumann_data(), static_cast<T>(dt), r);
  if (rhs_norms) *rhs_norms = backend_.difference_norms(r, nullptr, g.size());
  for (int axis = 0; axis < 3; ++axis) {
    if (dirichlet_moves_) set_dirichlet_increments(r, axis);
    backend_.solve_lines(op_, axis, tau, r);
  }
  backend_.axpy(T(1), r, u, g.size());

  if (dirichlet_moves_) {
    // Impose g^{n+1} exactly so that rounding in the increments never accumulates; faces
    // in x, y, z order as in initialize().
    // Fixed faces are written again too, so that shared edges take the same face's value.
    for (int f = 0; f < 6; ++f) {
      if (!g_now_[f].data()) continue;
      if (face_moves_[f]) std::swap(g_now_[f], g_next_[f]);
      backend_.set_face(g, f, g_now_[f].data(), u);
    }
  }
}

template <class T>
void DouglasStepper<T>::residual(const T* u, double t, T* r) {
  load_forcing(t);
  update_face_data(u);
  backend_.operator_rhs(op_, u, source_.data(), unfolded_neumann_data(), T(1), r);
}

template class DouglasStepper<float>;
template class DouglasStepper<double>;

}  // namespace adi3d
