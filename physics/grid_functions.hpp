#pragma once
// Formulas sampled on grid nodes and on face nodes, in parallel, a row at a time.
#include "physics/formula.hpp"
#include "solvers/grid.hpp"

namespace adi3d::physics {

template <class T>
void sample_grid(const Formula& f, const Grid3& grid, double t, T* out);

// Face layout of solvers/face_layout.hpp.
template <class T>
void sample_face(const Formula& f, const Grid3& grid, int face, double t, T* out);

}  // namespace adi3d::physics
