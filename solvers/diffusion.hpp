#pragma once
// A diffusion operator as the solvers take it: grid, boundary kinds and diffusivity, plus
// the data that drives it (sources, boundary values), supplied by the layer above through
// Forcing so that solvers/ never sees formulas or decks.
#include "solvers/backend.hpp"
#include "solvers/boundary.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/grid.hpp"

#include <array>
#include <optional>
#include <vector>

namespace adi3d {

template <class T>
struct Diffusion {
  using value_type = T;
  Grid3 grid;
  BoundarySpec bc;
  std::array<double, 3> alpha{1.0, 1.0, 1.0};  // per-axis constant diffusivity
  std::vector<T> alpha_field;                   // node diffusivity; empty when constant
  // Or the node diffusivity already in backend memory (sampled there from a formula), with
  // alpha_field empty; whole_alpha_range then holds its range, on one rank too.
  const T* backend_alpha = nullptr;
  // Where the run is split over ranks: grid, bc and alpha_field are then this rank's slab
  // with its ghost planes, whose faces are Dirichlet for the kernels and carry no data.
  SlabDecomposition slab;
  // The smallest and largest alpha value over every rank (distributed runs and backend_alpha).
  std::array<double, 2> whole_alpha_range{0, 0};

  const Grid3& whole_grid() const { return slab.distributed() ? slab.whole : grid; }
  const BoundarySpec& whole_bc() const { return slab.distributed() ? slab.whole_bc : bc; }
  // Whether a face of `grid` is a neighbour's ghost plane.
  bool interface(int face) const { return slab.interface(face); }
};

// Host-side data of a problem, evaluated on request. Face arrays use face_layout.hpp.
template <class T>
class Forcing {
 public:
  virtual ~Forcing() = default;
  virtual bool has_source() const = 0;
  virtual bool source_depends_on_time() const = 0;
  virtual void source(double t, T* grid_values) const = 0;
  // Dirichlet value or Neumann outward normal derivative on a face.
  virtual bool boundary_depends_on_time(int face) const = 0;
  virtual bool boundary_is_zero(int face) const = 0;
  virtual void boundary(int face, double t, T* face_values) const = 0;

  // Evaluates the source (or a face's data) straight into backend memory when it can, as
  // formulas compiled for the GPU do; false means the caller evaluates on the host and
  // uploads.
  virtual bool source_on_backend(double t, T* values, Backend<T>& backend) const {
    (void)t, (void)values, (void)backend;
    return false;
  }
  virtual bool boundary_on_backend(int face, double t, T* values, Backend<T>& backend) const {
    (void)face, (void)t, (void)values, (void)backend;
    return false;
  }

  // Robin faces: h of -alpha du/dn = h (u - u_inf), boundary() giving u_inf. Where h is one
  // value over the face for all time, robin_h_constant gives it (the shared line factors
  // then take it; a forcing that knows no Robin data says 0, an insulated face), else
  // nothing and robin_h samples it per face node.
  virtual std::optional<double> robin_h_constant(int face) const {
    (void)face;
    return 0.0;
  }
  // The smallest and largest h over the face (every rank's part of it) at the start: what
  // the Poisson iteration's spectrum bounds take.
  virtual std::array<double, 2> robin_h_range(int face) const {
    const double h = robin_h_constant(face).value_or(0.0);
    return {h, h};
  }
  virtual bool robin_h_depends_on_time(int face) const {
    (void)face;
    return false;
  }
  virtual void robin_h(int face, double t, T* face_values) const { (void)face, (void)t, (void)face_values; }
  virtual bool robin_h_on_backend(int face, double t, T* values, Backend<T>& backend) const {
    (void)face, (void)t, (void)values, (void)backend;
    return false;
  }
};

// No source and zero boundary data: benchmarks and homogeneous problems.
template <class T>
class ZeroForcing final : public Forcing<T> {
 public:
  bool has_source() const override { return false; }
  bool source_depends_on_time() const override { return false; }
  void source(double, T*) const override {}
  bool boundary_depends_on_time(int) const override { return false; }
  bool boundary_is_zero(int) const override { return true; }
  void boundary(int, double, T*) const override {}
};

// An OperatorView over backend memory (alpha_field) for kernels.
template <class T>
OperatorView<T> make_operator_view(const Diffusion<T>& d,
                                   const typename Diffusion<T>::value_type* alpha_field);

}  // namespace adi3d
