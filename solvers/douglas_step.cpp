#include "solvers/douglas_step.hpp"

#include "solvers/discretization.hpp"
#include "solvers/face_layout.hpp"

namespace adi3d {
namespace {

// out = (I - tau A_b) w along tangential axis b of a face array (host), identity where the
// row along b is a Dirichlet row.
template <class T>
void apply_tangential_factor(const OperatorView<T>& op, const Grid3& g, int face, int b, T tau,
                             const std::vector<T>& w, std::vector<T>& out) {
  const FaceAxes fa = face_axes(face);
  const int nu = g.n[fa.u], nv = g.n[fa.v];
  const bool periodic = op.lo[b] == BoundaryKind::periodic;
  out.resize(w.size());
  for (int vb = 0; vb < nv; ++vb) {
    for (int ua = 0; ua < nu; ++ua) {
      const std::size_t e = ua + static_cast<std::size_t>(nu) * vb;
      const int i = (b == fa.u) ? ua : vb;
      const int n = g.n[b];
      const AxisRow<T> row = axis_row(op, b, i, face_node(g, face, ua, vb), g.stride(b));
      if (row.kind == RowKind::dirichlet) {
        out[e] = w[e];
        continue;
      }
      const int im = lower_neighbour(i, n, periodic), ip = upper_neighbour(i, n, periodic);
      const std::size_t em = (b == fa.u) ? im + static_cast<std::size_t>(nu) * vb
                                         : ua + static_cast<std::size_t>(nu) * im;
      const std::size_t ep = (b == fa.u) ? ip + static_cast<std::size_t>(nu) * vb
                                         : ua + static_cast<std::size_t>(nu) * ip;
      out[e] = w[e] - tau * (row.w.wm * (w[em] - w[e]) + row.w.wp * (w[ep] - w[e]));
    }
  }
}

}  // namespace

template <class T>
DouglasStepper<T>::DouglasStepper(Backend<T>& backend, const Diffusion<T>& diffusion,
                                  const Forcing<T>& forcing, double theta)
    : backend_(backend), diffusion_(diffusion), forcing_(forcing), theta_(theta) {
  const Grid3& g = diffusion.grid;
  if (!diffusion.alpha_field.empty()) {
    alpha_ = backend.allocate(g.size());
    backend.upload(diffusion.alpha_field.data(), alpha_.data(), g.size());
  }
  op_ = make_operator_view(diffusion, alpha_.empty() ? nullptr : alpha_.data());
  host_op_ = make_operator_view(diffusion,
                                diffusion.alpha_field.empty() ? nullptr : diffusion.alpha_field.data());
  rhs_ = backend.allocate(g.size());
  if (forcing.has_source()) source_ = backend.allocate(g.size());
  for (int f = 0; f < 6; ++f) {
    const BoundaryKind kind = diffusion.bc.face[f];
    if (kind == BoundaryKind::neumann && !forcing.boundary_is_zero(f))
      neumann_[f] = backend.allocate(face_size(g, f));
    if (kind == BoundaryKind::dirichlet) {
      if (forcing.boundary_depends_on_time(f)) dirichlet_moves_ = true;
      face_scratch_[f] = backend.allocate(face_size(g, f));
    }
  }
}

template <class T>
void DouglasStepper<T>::load_forcing(double t) {
  const Grid3& g = diffusion_.grid;
  const bool first = !forcing_loaded_;
  if (!first && t == forcing_time_) return;
  if (source_.data() && (first || forcing_.source_depends_on_time()) &&
      !forcing_.source_on_backend(t, source_.data(), backend_)) {
    host_source_.resize(g.size());
    forcing_.source(t, host_source_.data());
    backend_.upload(host_source_.data(), source_.data(), g.size());
  }
  std::vector<T> face;
  for (int f = 0; f < 6; ++f) {
    if (!neumann_[f].data() || !(first || forcing_.boundary_depends_on_time(f))) continue;
    if (forcing_.boundary_on_backend(f, t, neumann_[f].data(), backend_)) continue;
    face.resize(face_size(g, f));
    forcing_.boundary(f, t, face.data());
    backend_.upload(face.data(), neumann_[f].data(), face.size());
  }
  forcing_loaded_ = true;
  forcing_time_ = t;
}

template <class T>
void DouglasStepper<T>::initialize(T* u, double t0) {
  const Grid3& g = diffusion_.grid;
  // Faces in x, y, z order: the last written wins on shared edges.
  for (int f = 0; f < 6; ++f) {
    if (diffusion_.bc.face[f] != BoundaryKind::dirichlet) continue;
    g_now_[f].resize(face_size(g, f));
    forcing_.boundary(f, t0, g_now_[f].data());
    backend_.upload(g_now_[f].data(), face_scratch_[f].data(), g_now_[f].size());
    backend_.set_face(g, f, face_scratch_[f].data(), u);
  }
}

template <class T>
void DouglasStepper<T>::set_dirichlet_increments(T* field, int axis) {
  const Grid3& g = diffusion_.grid;
  for (int side = 0; side < 2; ++side) {
    const int f = face_index(axis, side);
    if (diffusion_.bc.face[f] != BoundaryKind::dirichlet) continue;
    backend_.upload(stage_values_[f].data(), face_scratch_[f].data(), stage_values_[f].size());
    backend_.set_face(g, f, face_scratch_[f].data(), field);
  }
}

template <class T>
void DouglasStepper<T>::step(T* u, double t, double dt, Norms* rhs_norms) {
  const Grid3& g = diffusion_.grid;
  const T tau = static_cast<T>(theta_ * dt);
  load_forcing(t + theta_ * dt);
  // Fixed Dirichlet data and no Neumann data: the backend may run the whole step fused.
  bool neumann_data = false;
  for (int f = 0; f < 6; ++f) neumann_data = neumann_data || neumann_[f].data() != nullptr;
  if (!dirichlet_moves_ && !neumann_data && !rhs_norms &&
      backend_.fused_douglas_step(op_, u, source_.data(), static_cast<T>(dt), tau, rhs_.data()))
    return;

  std::array<std::vector<T>, 6> g_next;
  if (dirichlet_moves_) {
    std::vector<T> dg, w;
    for (int f = 0; f < 6; ++f) {
      if (diffusion_.bc.face[f] != BoundaryKind::dirichlet) continue;
      g_next[f].resize(face_size(g, f));
      forcing_.boundary(f, t + dt, g_next[f].data());
      dg.resize(g_next[f].size());
      for (std::size_t e = 0; e < dg.size(); ++e) dg[e] = g_next[f][e] - g_now_[f][e];
      const int axis = f / 2;
      if (axis == 2) {
        stage_values_[f] = dg;
      } else if (axis == 1) {
        apply_tangential_factor(host_op_, g, f, 2, tau, dg, stage_values_[f]);
      } else {
        apply_tangential_factor(host_op_, g, f, 2, tau, dg, w);
        apply_tangential_factor(host_op_, g, f, 1, tau, w, stage_values_[f]);
      }
    }
  }

  T* r = rhs_.data();
  FaceData<T> neumann{};
  for (int f = 0; f < 6; ++f) neumann[f] = neumann_[f].data();
  backend_.operator_rhs(op_, u, source_.data(), neumann, static_cast<T>(dt), r);
  if (rhs_norms) *rhs_norms = backend_.difference_norms(r, nullptr, g.size());
  for (int axis = 0; axis < 3; ++axis) {
    if (dirichlet_moves_) set_dirichlet_increments(r, axis);
    backend_.solve_lines(op_, axis, tau, r);
  }
  backend_.axpy(T(1), r, u, g.size());

  if (dirichlet_moves_) {
    // Impose g^{n+1} exactly so that rounding in the increments never accumulates.
    for (int f = 0; f < 6; ++f) {
      if (diffusion_.bc.face[f] != BoundaryKind::dirichlet) continue;
      g_now_[f] = std::move(g_next[f]);
      backend_.upload(g_now_[f].data(), face_scratch_[f].data(), g_now_[f].size());
      backend_.set_face(g, f, face_scratch_[f].data(), u);
    }
  }
}

template <class T>
void DouglasStepper<T>::residual(const T* u, double t, T* r) {
  load_forcing(t);
  FaceData<T> neumann{};
  for (int f = 0; f < 6; ++f) neumann[f] = neumann_[f].data();
  backend_.operator_rhs(op_, u, source_.data(), neumann, T(1), r);
}

template class DouglasStepper<float>;
template class DouglasStepper<double>;

}  // namespace adi3d
