#pragma once
// Forcing (solvers/diffusion.hpp) from deck formulas: the source f(x,y,z,t) and per-face
// boundary data.
#include "physics/formula.hpp"
#include "physics/grid_functions.hpp"
#include "physics/non_finite.hpp"
#include "solvers/rtc/device_function.hpp"
#include "solvers/diffusion.hpp"

#include <array>
#include <memory>
#include <optional>

namespace adi3d::physics {

template <class T>
class FormulaForcing final : public Forcing<T> {
 public:
  // faces: each face's data (Dirichlet value, Neumann derivative, Robin u_inf), none where
  // periodic; robin_h: a Robin face's h.
  FormulaForcing(const Grid3& grid, Formula source, std::array<std::optional<Formula>, 6> faces,
                 std::array<std::optional<Formula>, 6> robin_h = {})
      : grid_(grid), source_(std::move(source)), faces_(std::move(faces)), robin_h_(std::move(robin_h)) {}

  bool has_source() const override { return !source_.is_zero(); }
  bool source_depends_on_time() const override { return source_.uses("t"); }
  void source(double t, T* out) const override;
  bool boundary_depends_on_time(int face) const override {
    return faces_[face] && faces_[face]->uses("t");
  }
  bool boundary_is_zero(int face) const override { return !faces_[face] || faces_[face]->is_zero(); }
  void boundary(int face, double t, T* out) const override;
  // On a CUDA backend, formulas are compiled for the GPU once (NVRTC) and sampled there.
  bool source_on_backend(double t, T* values, Backend<T>& backend) const override;
  bool boundary_on_backend(int face, double t, T* values, Backend<T>& backend) const override;
  std::optional<double> robin_h_constant(int face) const override;
  std::array<double, 2> robin_h_range(int face) const override { return robin_h_range_[face]; }
  // Set by whoever sampled h over the whole face (problem setup); a constant h sets itself.
  void set_robin_h_range(int face, std::array<double, 2> range) { robin_h_range_[face] = range; }
  bool robin_h_depends_on_time(int face) const override { return robin_h_[face] && robin_h_[face]->uses("t"); }
  void robin_h(int face, double t, T* out) const override;
  bool robin_h_on_backend(int face, double t, T* values, Backend<T>& backend) const override;

  // The first sample so far, on the host or the GPU, that was not finite: the run checks
  // this where it checks its field (heat_run), so that bad data is a deck error naming the
  // formula's key, the node and the time of the sampling, rather than a field gone NaN.
  // On the GPU the sampling kernels record it as they write; asking reads it back (a wait
  // for the stream), so it is asked every few steps, not after every sampling.
  std::optional<NonFiniteSample> first_non_finite() const;

 private:
  void record(const Formula& f, double t, const std::optional<NonFiniteNode>& node) const;
  // f on a face's nodes (none: zeros), recorded as every sampling is.
  void sample_face_formula(const std::optional<Formula>& f, int face, double t, T* out) const;
  // The same on the backend by f's compiled function (device slot `slot`); false where
  // there is none (no formula, not a CUDA backend, or it did not compile).
  bool sample_face_on_backend(const std::optional<Formula>& f, int slot, int face, double t, T* values,
                              Backend<T>& backend) const;

  const rtc::DeviceFunction<T>* device_function(const Formula& f, int slot, Backend<T>& backend) const;

  // The formula of a device slot: 0 the source, 1..6 the faces' data, 7..12 their Robin h.
  const Formula& slot_formula(int slot) const;

  Grid3 grid_;
  Formula source_;
  std::array<std::optional<Formula>, 6> faces_;
  std::array<std::optional<Formula>, 6> robin_h_;
  std::array<std::array<double, 2>, 6> robin_h_range_{};
  // Compiled on first use, by slot (slot_formula). A formula that fails to compile for the
  // GPU is reported once and evaluated on the host from then on.
  static constexpr int kSlots = 13;
  mutable std::array<std::unique_ptr<rtc::DeviceFunction<T>>, kSlots> device_;
  mutable std::array<bool, kSlots> device_failed_{};
  mutable std::optional<NonFiniteSample> host_non_finite_;  // the first of the host's samplings
};

}  // namespace adi3d::physics
