#include "physics/formula_forcing.hpp"

#include "physics/grid_functions.hpp"
#include "solvers/face_layout.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace adi3d::physics {

template <class T>
void FormulaForcing<T>::source(double t, T* out) const {
  sample_grid(source_, grid_, t, out);
}

template <class T>
void FormulaForcing<T>::boundary(int face, double t, T* out) const {
  if (!faces_[face]) {
    std::fill(out, out + face_size(grid_, face), T(0));
    return;
  }
  sample_face(*faces_[face], grid_, face, t, out);
}

template <class T>
const rtc::DeviceFunction<T>* FormulaForcing<T>::device_function(const Formula& f, int slot,
                                                                   Backend<T>& backend) const {
  if (backend.kind() != BackendKind::cuda || device_failed_[slot]) return nullptr;
  if (!device_[slot]) {
    try {
      device_[slot] = std::make_unique<rtc::DeviceFunction<T>>(f.device_expression(), backend.device());
    } catch (const std::exception& e) {
      device_failed_[slot] = true;
      spdlog::warn("formula '{}' is evaluated on the host: {}", f.text(), e.what());
      return nullptr;
    }
  }
  return device_[slot].get();
}

template <class T>
bool FormulaForcing<T>::source_on_backend(double t, T* values, Backend<T>& backend) const {
  const rtc::DeviceFunction<T>* fn = device_function(source_, 0, backend);
  if (!fn) return false;
  // On the backend's stream: ordered after the work that still reads the previous values.
  fn->sample_grid(grid_, t, values, backend.cuda_stream());
  return true;
}

template <class T>
bool FormulaForcing<T>::boundary_on_backend(int face, double t, T* values, Backend<T>& backend) const {
  if (!faces_[face]) return false;
  const rtc::DeviceFunction<T>* fn = device_function(*faces_[face], face + 1, backend);
  if (!fn) return false;
  fn->sample_face(grid_, face, t, values, backend.cuda_stream());
  return true;
}

template class FormulaForcing<float>;
template class FormulaForcing<double>;

}  // namespace adi3d::physics
