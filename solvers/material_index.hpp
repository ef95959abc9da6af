#pragma once
// A node diffusivity field with few distinct values (the materials of a chip stack, a
// layered slab, a voxelised part) in the compact form that the CUDA fused variable step
// streams: one byte per node naming its material, and the face diffusivity (harmonic
// mean) of every pair of materials. A pass then reads 1 byte per node where it read
// sizeof(T), and looks the face means up where it divided. The table holds the means of
// discretization.hpp exactly, so the face weights are the CPU rule's to the bit.
#include "solvers/backend.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace adi3d {

// Materials a field may hold to be indexed: the face table (kMaxMaterials^2 values) then
// stays small enough for shared memory and L1 beside the kernels' tiles.
constexpr int kMaxMaterials = 16;
// Bytes per x row of the index are a multiple of this, so that every row starts a tile of
// 32 columns aligned for 16-byte copies, and a tile never reads past its row.
constexpr int kMaterialRowAlign = 32;

template <class T>
struct MaterialIndex {
  int materials = 0;               // distinct values; 0 where the field has more than kMaxMaterials
  int pitch = 0;                   // bytes per x row of index
  std::vector<std::uint8_t> index; // node (i, j, k) at i + pitch (j + ny k); padding is 0
  std::vector<T> value;            // the materials' diffusivities, in order of first appearance
  // harmonic_mean(value[a], value[b]) at a kMaxMaterials + b (0 for unused slots).
  std::vector<T> face_mean;
};

// The index of a field of n[0] x n[1] x n[2] nodes (x fastest), or materials = 0 (and
// nothing else filled) where it has more than kMaxMaterials distinct values. Values are
// told apart by their bits (so -0 and +0 are two materials; alpha is positive anyway).
template <class T>
MaterialIndex<T> index_materials(const std::vector<T>& alpha, const std::array<int, 3>& n);

// An index in backend memory (Backend::upload_bytes), and the operator pointed at it.
template <class T>
struct MaterialArrays {
  Array<std::uint8_t> index;
  Array<T> face_mean;
  int pitch = 0;
  int count = 0;  // materials

  void attach(OperatorView<T>& op) const {
    op.material = index.data();
    op.material_face_mean = face_mean.data();
    op.material_pitch = pitch;
    op.material_count = count;
  }
};
template <class T>
MaterialArrays<T> upload_materials(Backend<T>& backend, const MaterialIndex<T>& m);

// The index of an alpha field already in backend memory, built by the backend where the
// field is (Backend::index_materials: the CUDA backend on the device, so that a GPU run's
// field never comes to the host); count = 0 where it has more than kMaxMaterials values or
// the backend builds none (one that reads no index). Materials may be numbered in another
// order than index_materials' above; the face means, hence the steps, are the same to the
// bit.
template <class T>
MaterialArrays<T> index_materials(Backend<T>& backend, const T* alpha, const std::array<int, 3>& n);

// The pitch of an index's rows for nx nodes (kMaterialRowAlign).
inline int material_pitch(int nx) { return (nx + kMaterialRowAlign - 1) / kMaterialRowAlign * kMaterialRowAlign; }

}  // namespace adi3d
