#pragma once
// Picks the backend a run asked for: auto takes the GPU when there is one and says which
// it took; cuda without a usable GPU is a runtime failure with the reason.
#include "io/run_config.hpp"
#include "solvers/backend.hpp"

#include <memory>

namespace adi3d::app {

// `device_bytes` is what the run will allocate on a GPU: checked against the device's free
// memory before anything is allocated (auto then falls back to the CPU; cuda fails).
template <class T>
std::unique_ptr<Backend<T>> choose_backend(io::BackendChoice choice, int device, std::size_t device_bytes);

}  // namespace adi3d::app
