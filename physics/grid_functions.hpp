#pragma once
// Formulas sampled on grid nodes and on face nodes, in parallel, a row at a time. Each
// sampling reports the first node (lowest index) whose value is not finite in T: checking
// inside the loop that writes the values costs nothing next to the formula's evaluation,
// where a second pass over the grid would cost a read of it.
#include "physics/formula.hpp"
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/grid.hpp"

#include <optional>

namespace adi3d::physics {

struct NonFiniteNode {
  double x = 0, y = 0, z = 0;
  double value = 0;
};

template <class T>
std::optional<NonFiniteNode> sample_grid(const Formula& f, const Grid3& grid, double t, T* out);

// The same over a rank's slab of the z split (ghost planes included): local plane k at the
// whole grid's plane slab.whole_plane(k), with the whole grid's coordinates (as the GPU's
// DeviceFunction::sample_slab). With `minuend` (the slab's size), out = minuend - f in
// double, rounded once to T: a field's error against an exact solution; the node reported
// is still f's.
template <class T>
std::optional<NonFiniteNode> sample_slab(const Formula& f, const SlabDecomposition& slab, double t, T* out,
                                         const T* minuend = nullptr);

// Face layout of solvers/face_layout.hpp.
template <class T>
std::optional<NonFiniteNode> sample_face(const Formula& f, const Grid3& grid, int face, double t, T* out);

// The node of a face array's entry (face layout), for messages.
NonFiniteNode face_entry_node(const Grid3& grid, int face, std::size_t entry, double value);

}  // namespace adi3d::physics
