#pragma once
// Random grids, fields and boundary mixes shared by the operator and line-solve tests.
#include "solvers/diffusion.hpp"
#include "solvers/discretization.hpp"
#include "solvers/face_layout.hpp"

#include <array>
#include <random>
#include <vector>

namespace adi3d::test {

template <class T>
std::vector<T> random_field(std::size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Whether fold_neumann_terms writes node (i, j, k): an unknown node on a face whose data
// (null: none) is given.
template <class T>
bool folds_neumann_node(const OperatorView<T>& op, const std::array<const T*, 6>& data, int i, int j, int k) {
  bool on_data_face = false;
  for (int face = 0; face < 6; ++face) on_data_face = on_data_face || (data[face] && on_face(op.n, face, i, j, k));
  return on_data_face && !is_dirichlet_node(op, i, j, k);
}

inline BoundarySpec boundary_mix(BoundaryKind x, BoundaryKind y, BoundaryKind z) {
  BoundarySpec bc;
  const BoundaryKind k[3] = {x, y, z};
  for (int a = 0; a < 3; ++a) bc.face[2 * a] = bc.face[2 * a + 1] = k[a];
  return bc;
}

// A box of n nodes per axis on [lo, lo + length]^3, periodic along z where asked (an axis of
// one node gets spacing 1).
inline Grid3 box_grid(std::array<int, 3> n, double lo, double length, bool periodic_z = false) {
  Grid3 g;
  g.n = n;
  g.lo = {lo, lo, lo};
  for (int a = 0; a < 3; ++a) g.h[a] = n[a] > 1 ? grid_spacing(lo, lo + length, n[a], a == 2 && periodic_z) : 1.0;
  return g;
}

// Dirichlet faces, or a periodic z axis.
inline BoundarySpec periodic_z_or_not(bool periodic_z) {
  using B = BoundaryKind;
  return boundary_mix(B::dirichlet, B::dirichlet, periodic_z ? B::periodic : B::dirichlet);
}

template <class T>
Diffusion<T> make_diffusion(std::array<int, 3> n, BoundarySpec bc, bool variable_alpha,
                            std::mt19937& rng) {
  Diffusion<T> d;
  d.bc = bc;
  for (int a = 0; a < 3; ++a) {
    d.grid.n[a] = n[a];
    d.grid.lo[a] = 0.0;
    d.grid.h[a] = grid_spacing(0.0, 1.0 + 0.25 * a, n[a], bc.periodic(a));
  }
  d.alpha = {0.7, 1.3, 0.4};
  if (variable_alpha) d.alpha_field = random_field<T>(d.grid.size(), rng, 0.1, 3.0);
  return d;
}

}  // namespace adi3d::test
