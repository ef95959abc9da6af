#pragma once
// The discrete diffusion operator A = Ax + Ay + Az as plain data that every backend and
// kernel reads: shape, spacing, diffusivity (constant per axis or a node field) and the
// boundary kind of each face. Point rules live in discretization.hpp.
#include "solvers/boundary.hpp"

#include <cstdint>

namespace adi3d {

template <class T>
struct OperatorView {
  int n[3];
  T inv_h[3];
  T inv_h2[3];
  T alpha[3];             // per-axis diffusivity when alpha_field is null
  const T* alpha_field;   // node diffusivity (x fastest), or null; backend memory
  BoundaryKind lo[3];
  BoundaryKind hi[3];
  // The same field indexed by material (material_index.hpp), where the backend keeps that
  // form (Backend::reads_material_index) and the field has few values; else null. Read by
  // the kernels that know it (the CUDA fused variable step), ignored by the rest.
  const std::uint8_t* material;     // node (i, j, k) at i + material_pitch (j + ny k)
  const T* material_face_mean;      // kMaxMaterials^2 face means
  int material_pitch;
  int material_count;               // materials in use: bytes 0 .. material_count-1
  // Robin faces, which lo and hi call Neumann: their flux h (u_inf - u) reaches the rhs as
  // Neumann data made from u (Backend::robin_data), and the implicit rows carry its part
  // in u on their diagonal (axis_row). h per face node (face layout, backend memory) in
  // robin_h_field[face], else the constant robin_h[face]; both 0 where the face is not
  // Robin. Lines along an axis with an h field differ line by line (lines_alike).
  T robin_h[6];
  const T* robin_h_field[6];
  // A split run's z lines differ line by line on another rank (an h field on a Robin z
  // face of the whole grid): every rank then couples its z lines line by line, as the
  // ranks' reduced-system messages must be alike.
  bool z_lines_differ_elsewhere;
};

}  // namespace adi3d
