#pragma once
// Steady problem -div(alpha grad u) = f where alpha varies in ways the direct solve cannot
// take (alpha that varies along x or y: chip layers with vias and spreaders, smooth or
// random fields): conjugate gradients on the 7-point system PoissonAdi iterates on,
// preconditioned by the direct solve (spectral_solve.hpp) of the same problem with each z
// plane's mean alpha. A layered chip stack is then solved in the handful of iterations
// that its in-plane variation costs, where the ADI iteration needs tens.
//
// The operator A is symmetric in the product weighted by the half-cell weights W (1/2 per
// axis on the nodes of a non-periodic face: scale_boundary_faces by 1/2; tests/unit/
// test_poisson_krylov.cpp checks the symmetry),
// so CG runs on S = -W A, symmetric positive definite in the plain product:
//   r = W (A u + b)          (the stepper's residual, weighted)
//   S p = -W (A p)           with A p = residual(p) - residual(0): the residual is affine
//                            in u (Robin data included) and residual(0) holds the data
//   M r = (-A0)^-1 W^-1 r    (A0: the plane-mean problem; symmetric positive definite too)
// Written once against Backend. The face data and the report are PoissonAdi's; a singular
// problem (nothing anchors u) and a split z axis are not taken yet (krylov_obstacle).
#include "solvers/poisson_adi.hpp"
#include "solvers/spectral_solve.hpp"

#include <functional>
#include <memory>
#include <string>

namespace adi3d {

// Why the Krylov solve does not take this problem ("" where it does): a split z axis, no
// face that anchors u (Dirichlet, or Robin with h > 0), or faces the direct solve of its
// preconditioner cannot take.
template <class T>
std::string krylov_obstacle(const Diffusion<T>& diffusion, const Forcing<T>& forcing);

template <class T>
class PoissonKrylov {
 public:
  // Throws std::invalid_argument with krylov_obstacle's reason, and BackendUnavailable
  // where the backend has no direct solve for the preconditioner.
  PoissonKrylov(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                PoissonOptions options);
  ~PoissonKrylov();

  // Solves from the guess in u (backend memory), as PoissonAdi::solve: progress(k, relative
  // residual) after each iteration, stop() to end early.
  PoissonReport solve(T* u, const std::function<void(long, double)>& progress = {},
                      const std::function<bool()>& stop = {});

 private:
  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  PoissonOptions options_;
  PoissonAdi<T> adi_;
  SpectralLayers<T> plane_means_;
  std::unique_ptr<SpectralSolve<T>> preconditioner_;  // made at the first solve
};

}  // namespace adi3d
