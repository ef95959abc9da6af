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

}  // namespace

template <class T>
MaterialIndex<T> index_materials(const std::vector<T>& alpha, const std::array<int, 3>& n) {
  const std::size_t nx = static_cast<std::size_t>(n[0]), rows = static_cast<std::size_t>(n[1]) * n[2];
  if (alpha.size() != nx * rows) throw std::invalid_argument("index_materials: field size does not match the grid");
  MaterialIndex<T> m;
  // A field is mostly runs of one material: the last value found is checked first.
  std::vector<std::uint8_t> index;
  const std::size_t pitch = (nx + kMaterialRowAlign - 1) / kMaterialRowAlign * kMaterialRowAlign;
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
  m.face_mean.assign(kMaxMaterials * kMaxMaterials, T(0));
  for (int a = 0; a < m.materials; ++a)
    for (int b = 0; b < m.materials; ++b) m.face_mean[a * kMaxMaterials + b] = harmonic_mean(m.value[a], m.value[b]);
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

template MaterialArrays<float> upload_materials(Backend<float>&, const MaterialIndex<float>&);
template MaterialArrays<double> upload_materials(Backend<double>&, const MaterialIndex<double>&);
template MaterialIndex<float> index_materials(const std::vector<float>&, const std::array<int, 3>&);
template MaterialIndex<double> index_materials(const std::vector<double>&, const std::array<int, 3>&);

}  // namespace adi3d
