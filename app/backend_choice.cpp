#include "app/backend_choice.hpp"

#include <spdlog/spdlog.h>

namespace adi3d::app {

template <class T>
std::unique_ptr<Backend<T>> choose_backend(io::BackendChoice choice, int device) {
  if (choice == io::BackendChoice::cpu) return make_cpu_backend<T>();
  if (choice == io::BackendChoice::cuda) return make_cuda_backend<T>(device);
  if (!cuda_compiled()) {
    spdlog::info("backend auto: CUDA not compiled into this binary, using the CPU");
    return make_cpu_backend<T>();
  }
  if (cuda_device_count() == 0) {
    spdlog::info("backend auto: no CUDA device found, using the CPU");
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

template std::unique_ptr<Backend<float>> choose_backend(io::BackendChoice, int);
template std::unique_ptr<Backend<double>> choose_backend(io::BackendChoice, int);

}  // namespace adi3d::app
