#include "physics/formula_forcing.hpp"

#include "physics/grid_functions.hpp"
#include "solvers/face_layout.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace adi3d::physics {

template <class T>
void FormulaForcing<T>::record(const Formula& f, double t, const std::optional<NonFiniteNode>& node) const {
  if (!node || host_non_finite_) return;
  host_non_finite_ = NonFiniteSample{f.key(), node->x, node->y, node->z, t, node->value};
}

template <class T>
void FormulaForcing<T>::source(double t, T* out) const {
  record(source_, t, sample_grid(source_, grid_, t, out));
}

template <class T>
void FormulaForcing<T>::sample_face_formula(const std::optional<Formula>& f, int face, double t, T* out) const {
  if (!f) {
    std::fill(out, out + face_size(grid_, face), T(0));
    return;
  }
  record(*f, t, sample_face(*f, grid_, face, t, out));
}

template <class T>
void FormulaForcing<T>::boundary(int face, double t, T* out) const {
  sample_face_formula(faces_[face], face, t, out);
}

template <class T>
std::optional<double> FormulaForcing<T>::robin_h_constant(int face) const {
  if (!robin_h_[face]) return 0.0;
  const Formula& h = *robin_h_[face];
  if (!h.is_constant()) return std::nullopt;
  return h(0, 0, 0, 0);
}

template <class T>
void FormulaForcing<T>::robin_h(int face, double t, T* out) const {
  sample_face_formula(robin_h_[face], face, t, out);
}

template <class T>
bool FormulaForcing<T>::robin_h_on_backend(int face, double t, T* values, Backend<T>& backend) const {
  return sample_face_on_backend(robin_h_[face], face + 7, face, t, values, backend);
}

template <class T>
const Formula& FormulaForcing<T>::slot_formula(int slot) const {
  return slot == 0 ? source_ : slot <= 6 ? *faces_[slot - 1] : *robin_h_[slot - 7];
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
bool FormulaForcing<T>::sample_face_on_backend(const std::optional<Formula>& f, int slot, int face, double t, T* values,
                                               Backend<T>& backend) const {
  if (!f) return false;
  const rtc::DeviceFunction<T>* fn = device_function(*f, slot, backend);
  if (!fn) return false;
  fn->sample_face(grid_, face, t, values, backend.cuda_stream());
  return true;
}

template <class T>
bool FormulaForcing<T>::boundary_on_backend(int face, double t, T* values, Backend<T>& backend) const {
  return sample_face_on_backend(faces_[face], face + 1, face, t, values, backend);
}

template <class T>
std::optional<NonFiniteSample> FormulaForcing<T>::first_non_finite() const {
  if (host_non_finite_) return host_non_finite_;
  for (int slot = 0; slot < kSlots; ++slot) {
    if (!device_[slot]) continue;
    const auto entry = device_[slot]->first_non_finite();
    if (!entry) continue;
    const Formula& f = slot_formula(slot);
    NonFiniteNode node;
    if (slot == 0) {
      const std::size_t nx = grid_.n[0], ny = grid_.n[1];
      node = {grid_.coord(0, static_cast<int>(entry->index % nx)), grid_.coord(1, static_cast<int>(entry->index / nx % ny)),
              grid_.coord(2, static_cast<int>(entry->index / (nx * ny))), entry->value};
    } else {
      node = face_entry_node(grid_, (slot - 1) % 6, entry->index, entry->value);
    }
    return NonFiniteSample{f.key(), node.x, node.y, node.z, entry->t, node.value};
  }
  return std::nullopt;
}

template class FormulaForcing<float>;
template class FormulaForcing<double>;

}  // namespace adi3d::physics
