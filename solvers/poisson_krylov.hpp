#pragma once
// Steady problem -div(alpha grad u) = f where alpha varies in ways the direct solve cannot
// take (alpha that varies along x or y: chip layers with vias and spreaders, smooth or
// random fields): conjugate gradients on the 7-point system PoissonAdi iterates on.
//
// The operator A is symmetric in the product weighted by the half-cell weights W (1/2 per
// axis on the nodes of a non-periodic face: scale_boundary_faces by 1/2; tests/unit/
// test_poisson_krylov.cpp checks the symmetry),
// so CG runs on S = -W A, symmetric positive (semi-)definite in the plain product:
//   r = W (A u + b)          (the stepper's residual, weighted)
//   S p = -W (A p)           with A p = residual(p) - residual(0): the residual is affine
//                            in u (Robin data included) and residual(0) holds the data
//   z = M r ~ (-A)^-1 W^-1 r by one of two preconditioners:
//     spectral  the direct solve (spectral_solve.hpp) of the problem with each z plane's
//               mean alpha (symmetric positive definite too): a layered chip stack is then
//               solved in the handful of iterations its in-plane variation costs, where
//               the ADI iteration needs tens. Where alpha varies smoothly inside planes,
//               scaled by D = sqrt(plane mean / alpha) on both sides (z = D L^-1 D g:
//               krylov_scales). One rank, faces the direct solve takes.
//     adi       one cycle of ADI iterations from zero on -A z = W^-1 r with zero face data
//               (PoissonAdi's steps): any faces, any number of ranks. Not symmetric, so
//               beta is the flexible (Polak-Ribiere) one, z_new . (r_new - r_old) / rz.
// A singular problem (nothing anchors u) is made compatible as PoissonAdi does; r then keeps
// zero sum (the constants are S's null space) and is projected back onto it each iteration
// against rounding, and the result has zero mean. Written once against Backend; the face
// data and the report are PoissonAdi's.
#include "solvers/poisson_adi.hpp"
#include "solvers/spectral_solve.hpp"

#include <functional>
#include <memory>
#include <string>

namespace adi3d {

// Why the Krylov solve with this preconditioner does not take this problem ("" where it
// does): the direct solve asked for on a split z axis or on faces it cannot take. The ADI
// cycle takes every problem.
template <class T>
std::string krylov_obstacle(const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                            KrylovPreconditioner preconditioner);
// Whether the direct solve's preconditioning is scaled by sqrt(plane mean / alpha) for this
// problem's alpha field (poisson_krylov.cpp, kLargestScaledJump: alpha that varies inside
// planes without jumps between neighbours), where it costs a handful of iterations.
template <class T>
bool krylov_scales(const Diffusion<T>& diffusion, Backend<T>& backend);
// The preconditioner `requested` resolves to: automatic takes the direct solve where it
// applies, else ADI.
template <class T>
KrylovPreconditioner krylov_preconditioner(const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                                           KrylovPreconditioner requested);

template <class T>
class PoissonKrylov {
 public:
  // options.preconditioner chooses (krylov_preconditioner). Throws std::invalid_argument
  // with krylov_obstacle's reason, and BackendUnavailable where the backend has no direct
  // solve for a spectral preconditioner.
  PoissonKrylov(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                PoissonOptions options);
  ~PoissonKrylov();

  // Solves from the guess in u (backend memory), as PoissonAdi::solve: progress(k, relative
  // residual) after each iteration, stop() to end early. report.method is "krylov";
  // report.taus holds the ADI preconditioner's cycle (empty with the direct solve).
  PoissonReport solve(T* u, const std::function<void(long, double)>& progress = {},
                      const std::function<bool()>& stop = {});

  KrylovPreconditioner preconditioner() const { return preconditioner_kind_; }

  class Preconditioner;  // z = M (W r): poisson_krylov.cpp

 private:
  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  PoissonOptions options_;
  PoissonAdi<T> adi_;
  bool singular_;
  KrylovPreconditioner preconditioner_kind_;
  std::unique_ptr<Preconditioner> preconditioner_;  // the direct solve, made at the first solve
};

}  // namespace adi3d
