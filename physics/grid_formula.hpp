#pragma once
// A deck formula sampled on every node of a rank's grid into backend memory: the initial
// field (initial.u), the exact solution (check.exact: the error u - exact) and a diffusivity
// given as a formula (material.diffusivity). On a CUDA backend the formula is compiled for
// the GPU (rtc::DeviceFunction: NVRTC and its compile cache, as the sources use) and sampled
// there, so that a GPU run never loops over the grid on the host; on the CPU backend muparser
// samples it on the host's threads (physics/grid_functions.hpp). Either way the first sample
// that is not finite is recorded, for the run's deck error at the formula's key.
#include "physics/formula.hpp"
#include "physics/grid_functions.hpp"
#include "physics/non_finite.hpp"
#include "solvers/backend.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/rtc/device_function.hpp"

#include <array>
#include <memory>
#include <optional>
#include <vector>

namespace adi3d::physics {

template <class T>
class GridFormula {
 public:
  // The formula on `slab`'s nodes (a whole grid: whole_grid_slab). With `keep_range`,
  // samplings keep the smallest and largest values (range()).
  GridFormula(Formula formula, const SlabDecomposition& slab, bool keep_range = false);
  ~GridFormula();

  const Formula& formula() const { return formula_; }
  const SlabDecomposition& slab() const { return slab_; }

  // values (backend memory, the slab's size, ghost planes included) = f at time t, queued
  // on the backend's stream.
  void sample(double t, T* values, Backend<T>& backend) const;
  // out = u - f at time t (backend memory, the slab's size), in double, rounded once to T.
  void sample_error(double t, const T* u, T* out, Backend<T>& backend) const;

  // The first sample so far whose value was not finite in T: the formula's key, the node
  // and the time. On the GPU, reading the record waits for the backend's stream.
  std::optional<NonFiniteSample> first_non_finite() const;
  // The smallest and largest finite values sampled so far ({inf, -inf} before any), where
  // kept; on the GPU, reading waits for the stream.
  std::array<double, 2> range() const;

  // Whether the samplings ran on the GPU (a CUDA backend, the formula compiled for it).
  bool on_device() const { return device_ != nullptr; }
  // Seconds spent compiling (or loading from the compile cache) the GPU code.
  double compile_seconds() const { return compile_seconds_; }

 private:
  // The compiled function on a CUDA backend, else null (the host samples).
  const rtc::DeviceFunction<T>* device(Backend<T>& backend) const;
  void record(const std::optional<NonFiniteNode>& node, double t) const;
  void widen_range(const std::vector<T>& values) const;
  // A constant formula's value in T, recorded where it is not finite (a constant needs no
  // sampling: the backend fills).
  T check_constant(double t) const;

  Formula formula_;
  SlabDecomposition slab_;
  bool keep_range_;
  mutable std::unique_ptr<rtc::DeviceFunction<T>> device_;
  mutable bool device_failed_ = false;
  mutable double compile_seconds_ = 0;
  mutable std::optional<NonFiniteSample> host_non_finite_;
  mutable std::array<double, 2> host_range_;
};

}  // namespace adi3d::physics
