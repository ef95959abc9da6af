#include "app/backend_choice.hpp"

#include "solvers/cuda/backend/cuda_variants.hpp"
#include "solvers/distributed/distributed_backend.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

namespace adi3d::app {

namespace {

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

constexpr double kCpuSecondsPerPointStep = 8.6e-9;  // one thread
constexpr double kCpuThreadGain = 0.47;             // what each further thread adds
constexpr double kGpuStartSeconds = 0.3;            // the GPU's start-up beyond the CPU's

double cpu_seconds(double point_steps, int threads) {
  return point_steps * kCpuSecondsPerPointStep / (1.0 + kCpuThreadGain * (std::max(threads, 1) - 1));
}

}  // namespace

bool cpu_finishes_sooner(double point_steps, int threads) {
  return point_steps > 0 && cpu_seconds(point_steps, threads) < kGpuStartSeconds;
}

template <class T>
std::unique_ptr<Backend<T>> choose_backend(io::BackendChoice choice, int device, std::size_t device_bytes,
                                           double point_steps) {
  if (choice == io::BackendChoice::cpu) return make_cpu_backend<T>();
  const auto fits = [&] { return cuda_free_bytes(device) >= device_bytes; };
  if (choice == io::BackendChoice::cuda) {
    auto backend = make_cuda_backend<T>(device);
    if (!fits())
      throw BackendUnavailable(fmt::format("the grid needs about {} on the GPU but device {} has {} free; use "
                                           "solver.precision = float, a smaller grid or solver.backend = cpu",
                                           gib(device_bytes), device, gib(cuda_free_bytes(device))));
    return backend;
  }
  if (!cuda_compiled()) {
    spdlog::info("backend auto: CUDA not compiled into this binary, using the CPU");
    return make_cpu_backend<T>();
  }
  // Before any CUDA call: asking the driver for its devices alone costs most of the GPU's
  // start-up (0.25 s on an H100 machine), which a run this small would pay for nothing.
  const int threads = omp_get_max_threads();
  if (cpu_finishes_sooner(point_steps, threads)) {
    spdlog::info("backend auto: {:.3g} point-steps take the CPU ({} threads) about {:.2f} s, less than a GPU's "
                 "start-up; using the CPU (solver.backend = cuda to insist)",
                 point_steps, threads, cpu_seconds(point_steps, threads));
    return make_cpu_backend<T>();
  }
  if (cuda_device_count() == 0) {
    spdlog::info("backend auto: no CUDA device found, using the CPU");
    return make_cpu_backend<T>();
  }
  if (!fits()) {
    spdlog::info("backend auto: the grid needs about {} on the GPU, device {} has {} free; using the CPU",
                 gib(device_bytes), device, gib(cuda_free_bytes(device)));
    return make_cpu_backend<T>();
  }
  try {
    auto backend = make_cuda_backend<T>(device);
    spdlog::info("backend auto: using the GPU ({})", backend->description());
    return backend;
  } catch (const BackendUnavailable& e) {
    spdlog::warn("backend auto: GPU present but unusable ({}), using the CPU", e.what());
    return make_cpu_backend<T>();
  }
}

template <class T>
std::unique_ptr<Backend<OtherPrecision<T>>> companion_backend(const Backend<T>& like, const SlabDecomposition& slab,
                                                              Communicator* comm) {
  using U = OtherPrecision<T>;
  std::unique_ptr<Backend<U>> backend =
      like.kind() == BackendKind::cuda ? make_cuda_backend<U>(like.device()) : make_cpu_backend<U>();
  if (!slab.distributed()) return backend;
  if (!comm) throw std::logic_error("a distributed companion backend needs the run's communicator");
  return std::make_unique<DistributedBackend<U>>(std::move(backend), slab, *comm);
}

template std::unique_ptr<Backend<float>> companion_backend(const Backend<double>&, const SlabDecomposition&,
                                                           Communicator*);
template std::unique_ptr<Backend<double>> companion_backend(const Backend<float>&, const SlabDecomposition&,
                                                            Communicator*);
template std::unique_ptr<Backend<float>> choose_backend(io::BackendChoice, int, std::size_t, double);
template std::unique_ptr<Backend<double>> choose_backend(io::BackendChoice, int, std::size_t, double);

}  // namespace adi3d::app
