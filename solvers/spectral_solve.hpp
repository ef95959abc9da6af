#pragma once
// The direct solve of the 7-point system -A e = r where A separates: constant alpha per
// axis, and along x and y both faces Dirichlet (DST-I diagonalises the rows), both Neumann
// (DCT-I: the mirrored ghost's row wm = 0, wp = 2 alpha / h^2) or periodic (DFT). Each
// (kx, ky) mode then leaves one tridiagonal system along z,
//   (-A_z + alpha_x lambda_x + alpha_y lambda_y) e_hat = r_hat,
// solved directly, so z takes any face kinds (Dirichlet, Neumann, periodic, mixed).
// The point rules (eigenvalues, which axes transform how) are here, for the CPU and CUDA
// implementations alike; backends make the solver (Backend::make_spectral_solve).
#include "solvers/boundary.hpp"
#include "solvers/host_device.hpp"

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace adi3d {

// How an axis transforms: sine (DST-I over the n - 2 interior nodes, both faces Dirichlet),
// cosine (DCT-I over all n nodes, both faces Neumann) or fourier (DFT over n nodes).
enum class SpectralAxis : int { sine = 0, cosine = 1, fourier = 2 };

inline SpectralAxis spectral_axis(const BoundarySpec& bc, int axis) {
  return bc.periodic(axis) ? SpectralAxis::fourier
         : bc.lo(axis) == BoundaryKind::dirichlet ? SpectralAxis::sine
                                                  : SpectralAxis::cosine;
}

// The period of an axis's transform: a sine or cosine axis of n nodes is the odd or even
// extension of period 2 (n - 1), a periodic one has period n.
ADI3D_HD int spectral_period(SpectralAxis kind, int n) { return kind == SpectralAxis::fourier ? n : 2 * (n - 1); }

// Eigenvalue of the axis's part of -A for wavenumber k of the period: 4 w sin^2(pi k / period),
// w = alpha / h^2 (the operator's own weight, rounded as its rows round it).
ADI3D_HD double spectral_eigenvalue(double w, int k, int period) {
  const double s = sin(3.14159265358979323846 * static_cast<double>(k) / static_cast<double>(period));
  return 4.0 * w * s * s;
}

// What keeps the direct solve from a problem: the face (0..5) or -1 for the diffusivity, and
// why; face == -2 and an empty reason where nothing does.
struct SpectralObstacle {
  int face = -2;
  std::string why;
  bool none() const { return why.empty(); }
  // The deck error at solver.method = spectral: which key is in the way, and why.
  std::string refusal() const {
    const std::string where = face >= 0 ? std::string("boundary.") + face_name(face) : "material.diffusivity";
    return "the direct solve needs a problem that separates, and " + where + " does not: " + why +
           "; use solver.method = adi or auto";
  }
};

// alpha_field: alpha is a field that varies along x or y (a field of z alone, layers, is
// fine). robin_h_varies[side]: the Robin h of z face `side` varies over the face (one h over
// a z face only changes the end rows of the z systems; a Robin face of x or y does not
// separate).
inline SpectralObstacle spectral_obstacle(const BoundarySpec& bc, bool alpha_field,
                                          std::array<bool, 2> robin_h_varies = {false, false}) {
  if (alpha_field)
    return {-1, "alpha varies along x or y (the direct solve needs alpha constant per axis, or a function of z "
                "alone)"};
  for (int f = 0; f < 4; ++f)
    if (bc.face[f] == BoundaryKind::robin)
      return {f, std::string("the ") + face_name(f) + " face is robin (the direct solve takes Dirichlet, "
                 "Neumann and periodic faces on x and y; robin faces on z)"};
  for (int side = 0; side < 2; ++side)
    if (bc.face[4 + side] == BoundaryKind::robin && robin_h_varies[side])
      return {4 + side, std::string("the ") + face_name(4 + side) + " face's robin h varies over it (the direct "
                        "solve takes one h over a z face)"};
  for (int a = 0; a < 2; ++a)
    if (bc.lo(a) != bc.hi(a))
      return {face_index(a, 1), std::string("the ") + face_name(face_index(a, 0)) + " and " +
                                    face_name(face_index(a, 1)) + " faces differ (the direct solve transforms "
                                    "x and y, whose two faces must be alike; z may mix them)"};
  return {};
}

// A direct solver for one operator (plans and scratch made once, reused by every solve).
template <class T>
class SpectralSolve {
 public:
  virtual ~SpectralSolve() = default;
  // u += e on the unknown nodes, e the solution of -A e = r with zero face data (r as
  // operator_rhs leaves it: 0 on Dirichlet nodes; backend memory). Where A is singular (no
  // Dirichlet face) r must be compatible, and e's constant part is arbitrary: the caller
  // sets the mean. r is scratch afterwards.
  virtual void solve(T* r, T* u) = 0;
};

// alpha on each z plane, where alpha is a field that varies along z alone (layers, the
// direct solve's one kind of field); empty where alpha is constant per axis.
template <class T>
struct SpectralLayers {
  std::vector<T> alpha;
};

}  // namespace adi3d
