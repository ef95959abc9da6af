#pragma once
// The Douglas ADI step in delta form with weight theta (DESIGN.md §2), written once for
// every backend:
//   (I - theta dt Ax) d1 = dt (A u^n + fbar),  (I - theta dt Ay) d2 = d1,
//   (I - theta dt Az) du = d2,                  u^{n+1} = u^n + du.
// Sources and Neumann data are taken at t + theta dt. Time-dependent Dirichlet data gets
// consistent intermediate boundary values (Fairweather & Mitchell): with dg = g^{n+1} - g^n,
// du = dg on z faces, d2 = (I - theta dt Az) dg on y faces and
// d1 = (I - theta dt Ay)(I - theta dt Az) dg on x faces, which keeps theta = 1/2 second
// order in time. The same step with theta = 1 and a pseudo-time step is one
// Douglas-Rachford iteration for the steady problem.
#include "solvers/backend.hpp"
#include "solvers/diffusion.hpp"
#include "solvers/material_index.hpp"

#include <array>
#include <vector>

namespace adi3d {

template <class T>
class DouglasStepper {
 public:
  DouglasStepper(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                 double theta);

  // Imposes Dirichlet data at t0 on u (backend memory) and loads time-independent data.
  void initialize(T* u, double t0);
  // Advances u from t to t + dt. When rhs_norms is given it receives the norms of the
  // first-stage right-hand side dt (A u^n + fbar), i.e. dt times the steady residual.
  void step(T* u, double t, double dt, Norms* rhs_norms = nullptr);

  // r = A u + f + Neumann terms at time t on unknown nodes, 0 on Dirichlet nodes: the
  // residual of the steady problem -A u = f.
  void residual(const T* u, double t, T* r);

  // The forcing's data changed although it does not depend on time (a mixed-precision
  // solve's next residual, poisson_mixed.hpp): the next step or residual loads it again.
  void forcing_changed() { forcing_loaded_ = false; }
  // A grid-sized array that is free between steps (the next step overwrites it).
  T* scratch() { return rhs_.data(); }

  const OperatorView<T>& view() const { return op_; }
  // Whether the Neumann data's face terms are in the source (fold_neumann_data).
  bool neumann_data_in_source() const { return neumann_folded_; }
  // Steps taken by the backend's fused step (the others ran operation by operation).
  long fused_steps() const { return fused_steps_; }
  Backend<T>& backend() { return backend_; }

 private:
  void load_forcing(double t);
  // The source at time t into source_ (on the backend where the forcing can), unfolded.
  void sample_source(double t);
  // The Neumann faces' data arrays (null where zero, or folded for good), whether there
  // is any, and what operator_rhs adds to the source (none once folded).
  FaceData<T> neumann_data() const;
  bool has_neumann_data() const;
  FaceData<T> unfolded_neumann_data() const;
  // Where the backend's fused step takes the operator, the Neumann data's face terms join
  // the source (source = f + Neumann terms: operator_rhs at u = 0; the fused step solves
  // under zero flux), so that those steps fuse too: once where data and source are fixed
  // in time (the faces' arrays then go), else on every load of either (fold_into_source,
  // face-sized), keeping a fixed source apart where the data moves. Without a source it
  // takes a zero source. Where the device has no room for that array, the step stays
  // unfused.
  void fold_neumann_data();
  void fold_into_source();
  // Face data (or with robin_h, a Robin face's h) at time t into backend memory: on the
  // backend where the forcing can (run-time compiled formulas), else sampled on the host
  // and uploaded.
  void sample_face(int face, double t, T* dst, bool robin_h = false);
  // The Robin faces' flux as Neumann data from u (neumann_), then the fold into the source
  // where the data has joined it and something moved since the last fold.
  void update_face_data(const T* u);
  // From g_now_ and g^{n+1} = g(t_next): the stage values of every moving Dirichlet face.
  void prepare_dirichlet_stages(double t_next, T tau);
  void set_dirichlet_increments(T* field, int axis);

  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  const Forcing<T>& forcing_;
  double theta_;
  OperatorView<T> op_{};  // over backend memory
  Array<T> alpha_;
  MaterialArrays<T> materials_;  // alpha_ by material, where the backend reads that form
  Array<T> source_;       // what the steps read: f, or f + the Neumann terms once folded
  Array<T> source_base_;  // a fixed f, where folded data moves
  Array<T> rhs_;
  std::array<Array<T>, 6> neumann_;  // Neumann data; on Robin faces their flux from u
  // Robin faces: u_inf (null where zero) and h where it varies over the face (op_'s
  // robin_h_field), sampled with the rest of the forcing.
  std::array<bool, 6> robin_{};
  std::array<Array<T>, 6> ambient_;
  std::array<Array<T>, 6> robin_h_;
  bool has_robin_ = false;
  bool folding_tried_ = false;
  bool neumann_folded_ = false;
  bool refold_ = false;        // folded data or the source moved since the last fold
  bool source_folded_ = false;  // source_ took the terms in place since its last sampling
  long fused_steps_ = 0;
  std::vector<T> host_source_;
  std::vector<T> host_face_;
  bool forcing_loaded_ = false;
  double forcing_time_ = 0;
  // Dirichlet data per face (backend memory): the values now imposed, and where the data
  // moves, the next values, the increment dg and the stage values built from it (zero on
  // faces whose data is fixed).
  bool dirichlet_moves_ = false;
  std::array<bool, 6> face_moves_{};
  std::array<Array<T>, 6> g_now_;
  std::array<Array<T>, 6> g_next_;
  std::array<Array<T>, 6> increment_;
  std::array<Array<T>, 6> stage_;
};

}  // namespace adi3d
