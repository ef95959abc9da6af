#pragma once
// Face arrays: the nodes of one face of the grid, indexed by the two other axes in
// increasing order (x-faces by (j,k), y-faces by (i,k), z-faces by (i,j)), first fastest.
#include "solvers/grid.hpp"
#include "solvers/host_device.hpp"

namespace adi3d {

struct FaceAxes {
  int axis;   // normal axis
  int u, v;   // tangential axes, u fastest
};

ADI3D_HD FaceAxes face_axes(int face) {
  const int axis = face / 2;
  return {axis, axis == 0 ? 1 : 0, axis == 2 ? 1 : 2};
}

inline std::size_t face_size(const Grid3& g, int face) {
  const FaceAxes f = face_axes(face);
  return static_cast<std::size_t>(g.n[f.u]) * g.n[f.v];
}

// Flat grid index of face node (a, b) (a along u, b along v) on an n[0] x n[1] x n[2] grid.
ADI3D_HD std::size_t face_node(const int n[3], int face, int a, int b) {
  const FaceAxes f = face_axes(face);
  int idx[3];
  idx[f.axis] = (face % 2 == 0) ? 0 : n[f.axis] - 1;
  idx[f.u] = a;
  idx[f.v] = b;
  return static_cast<std::size_t>(idx[0]) +
         static_cast<std::size_t>(n[0]) *
             (static_cast<std::size_t>(idx[1]) + static_cast<std::size_t>(n[1]) * idx[2]);
}

// The index of face `face`'s nodes along its normal axis. (Selects, not n[axis]: a run-time
// index into a kernel's parameters puts them in local memory.)
ADI3D_HD int face_plane(const int n[3], int face) {
  const int axis = face / 2;
  return face % 2 == 0 ? 0 : (axis == 0 ? n[0] : axis == 1 ? n[1] : n[2]) - 1;
}

// Node (a, b) of face `face` as grid indices i, j, k.
ADI3D_HD void face_node_indices(const int n[3], int face, int a, int b, int& i, int& j, int& k) {
  const int axis = face / 2, w = face_plane(n, face);
  i = axis == 0 ? w : a;
  j = axis == 1 ? w : axis == 0 ? a : b;
  k = axis == 2 ? w : b;
}

// Whether node (i, j, k) lies on face `face`.
ADI3D_HD bool on_face(const int n[3], int face, int i, int j, int k) {
  const int axis = face / 2;
  return (axis == 0 ? i : axis == 1 ? j : k) == face_plane(n, face);
}

// Whether node (i, j, k) lies on a face before `face` among those of `faces` (bit f: face
// f): so that work done per face of the set reaches a node shared by two of them once.
ADI3D_HD bool on_earlier_face(const int n[3], unsigned faces, int face, int i, int j, int k) {
  bool earlier = false;
  for (int other = 0; other < 5; ++other)
    earlier = earlier || (other < face && ((faces >> other) & 1u) && on_face(n, other, i, j, k));
  return earlier;
}

inline std::size_t face_node(const Grid3& g, int face, int a, int b) {
  return face_node(g.n.data(), face, a, b);
}

}  // namespace adi3d
