#pragma once
// Face arrays: the nodes of one face of the grid, indexed by the two other axes in
// increasing order (x-faces by (j,k), y-faces by (i,k), z-faces by (i,j)), first fastest.
#include "solvers/grid.hpp"

namespace adi3d {

struct FaceAxes {
  int axis;   // normal axis
  int u, v;   // tangential axes, u fastest
};

inline FaceAxes face_axes(int face) {
  const int axis = face / 2;
  return {axis, axis == 0 ? 1 : 0, axis == 2 ? 1 : 2};
}

inline std::size_t face_size(const Grid3& g, int face) {
  const FaceAxes f = face_axes(face);
  return static_cast<std::size_t>(g.n[f.u]) * g.n[f.v];
}

// Flat grid index of face node (a, b) (a along u, b along v).
inline std::size_t face_node(const Grid3& g, int face, int a, int b) {
  const FaceAxes f = face_axes(face);
  int idx[3];
  idx[f.axis] = (face % 2 == 0) ? 0 : g.n[f.axis] - 1;
  idx[f.u] = a;
  idx[f.v] = b;
  return g.index(idx[0], idx[1], idx[2]);
}

}  // namespace adi3d
