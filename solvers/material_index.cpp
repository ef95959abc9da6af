#include "solvers/material_index.hpp"

#include "solvers/discretization.hpp"

#include <cstring>
#include <stdexcept>

namespace adi3d {
namespace {

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// harmonic_mean(value[a], value[b]) at a kMaxMaterials + b, 0 in unused slots.
template <class T>
std::vector<T> face_means(const std::vector<T>& value) {
  std::vector<T> mean(kMaxMaterials * kMaxMaterials, T(0));
  for (std::size_t a = 0; a < value.size(); ++a)
    for (std::size_t b = 0; b < value.size(); ++b) mean[a * kMaxMaterials + b] = harmonic_mean(value[a], value[b]);
  return mean;
}

}  // namespace

template <class T>
MaterialIndex<T> index_materials(const std::vector<T>& alpha, const std::array<int, 3>& n) {
  const std::size_t nx = static_cast<std::size_t>(n[0]), rows = static_cast<std::size_t>(n[1]) * n[2];
  if (alpha.size() != nx * rows) throw std::invalid_argument("index_materials: field size does not match the grid");
  MaterialIndex<T> m;
  // A field is mostly runs of one material: the last value found is checked first.
  std::vector<std::uint8_t> index;
  const std::size_t pitch = static_cast<std::size_t>(material_pitch(n[0]));
  index.assign(pitch * rows, 0);
  int last = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < nx; ++i) {
      const T a = alpha[r * nx + i];
      if (m.value.empty() || !same_bits(a, m.value[last])) {
        int found = -1;
        for (int v = 0; v < static_cast<int>(m.value.size()); ++v)
          if (same_bits(a, m.value[v])) found = v;
        if (found < 0) {
          if (static_cast<int>(m.value.size()) == kMaxMaterials) return {};
          found = static_cast<int>(m.value.size());
          m.value.push_back(a);
        }
        last = found;
      }
      index[r * pitch + i] = static_cast<std::uint8_t>(last);
    }
  m.materials = static_cast<int>(m.value.size());
  m.pitch = static_cast<int>(pitch);
  m.index = std::move(index);
  m.face_mean = face_means(m.value);
  return m;
}

template <class T>
MaterialArrays<T> upload_materials(Backend<T>& backend, const MaterialIndex<T>& m) {
  if (m.materials == 0) throw std::invalid_argument("upload_materials: the field was not indexed");
  MaterialArrays<T> a;
  a.index = backend.upload_bytes(m.index.data(), m.index.size());
  a.face_mean = backend.allocate(m.face_mean.size());
  backend.upload(m.face_mean.data(), a.face_mean.data(), m.face_mean.size());
  a.pitch = m.pitch;
  a.count = m.materials;
  return a;
}

template <class T>
MaterialArrays<T> index_materials(Backend<T>& backend, const T* alpha, const std::array<int, 3>& n) {
  std::vector<T> values;
  Array<std::uint8_t> index;
  const int pitch = material_pitch(n[0]);
  if (!backend.index_materials(alpha, n, pitch, kMaxMaterials, values, index) ||
      static_cast<int>(values.size()) > kMaxMaterials)
    return {};
  MaterialArrays<T> a;
  a.index = std::move(index);
  const std::vector<T> mean = face_means(values);
  a.face_mean = backend.allocate(mean.size());
  backend.upload(mean.data(), a.face_mean.data(), mean.size());
  a.pitch = pitch;
  a.count = static_cast<int>(values.size());
  return a;
}

template MaterialArrays<float> index_materials(Backend<float>&, const float*, const std::array<int, 3>&);
template MaterialArrays<double> index_materials(Backend<double>&, const double*, const std::array<int, 3>&);
template MaterialArrays<float> upload_materials(Backend<float>&, const MaterialIndex<float>&);
template MaterialArrays<double> upload_materials(Backend<double>&, const MaterialIndex<double>&);
template MaterialIndex<float> index_materials(const std::vector<float>&, const std::array<int, 3>&);
template MaterialIndex<double> index_materials(const std::vector<double>&, const std::array<int, 3>&);

}  // namespace adi3d
