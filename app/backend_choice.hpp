#pragma once
// Picks the backend a run asked for: auto takes the GPU when there is one, unless the run
// is small enough for the CPU to finish sooner, and says which it took and why; cuda
// without a usable GPU is a runtime failure with the reason.
#include "io/run_config.hpp"
#include "solvers/backend.hpp"
#include "solvers/distributed/communicator.hpp"
#include "solvers/distributed/slab_decomposition.hpp"

#include <memory>

namespace adi3d::app {

// Whether the CPU backend on `threads` threads finishes `point_steps` (grid points times
// steps, or step-equivalents) sooner than a GPU, whose start-up costs more than its steps
// save on small runs. A measured model (docs/perf/auto_backend_h100.txt): the CPU takes
// 8.6 ns a point-step on one thread, its threads adding 47% of one each; the GPU's steps
// are nearly free at these sizes and its start-up costs 0.3 s more than the CPU's.
bool cpu_finishes_sooner(double point_steps, int threads);

// `device_bytes` is what the run will allocate on a GPU: checked against the device's free
// memory before anything is allocated (auto then falls back to the CPU; cuda fails).
// `point_steps` (0: not known) lets auto take the CPU where it finishes sooner.
template <class T>
std::unique_ptr<Backend<T>> choose_backend(io::BackendChoice choice, int device, std::size_t device_bytes,
                                           double point_steps = 0);

// A backend in the other precision of the same kind on the same device as `like` (the float
// half of a mixed-precision Poisson solve), distributed over the same slabs where the run is
// split (slab.distributed(); comm: the run's ranks).
template <class T>
std::unique_ptr<Backend<OtherPrecision<T>>> companion_backend(const Backend<T>& like, const SlabDecomposition& slab,
                                                              Communicator* comm);

}  // namespace adi3d::app
