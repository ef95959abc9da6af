#pragma once
// -div(alpha grad u) = f in mixed precision by defect correction (iterative refinement):
// the solution u and the residual in double, the corrections from float ADI iterations.
// Each refinement
//   r = A u + f (+ boundary terms)                  in double, on the double backend
//   -A e = r, zero boundary data, from e = 0         float ADI iterations (PoissonAdi<float>)
//   u += e                                           in double
// until ||r|| / ||r_0|| meets tol. A float solve reaches only about 1e-6..1e-3 of its own
// residual (its rounding floor, which grows like h^-2: docs/numerics.md); the refinements
// do not care, since each starts from the exact residual of the double u, so the double
// residual falls by the float solve's reduction per refinement, down to double's floor.
// Singular problems are made compatible in double and the result has zero mean, as in
// PoissonAdi.
#include "solvers/poisson_adi.hpp"

#include <functional>

namespace adi3d {

// How far each float solve takes its residual. The float sweeps continue the double
// iteration's parameter cycle across refinements, so that, rounding aside, they are the
// double iteration's steps: measured on the CPU to tol 1e-10 (inputs/poisson_*.ini, n = 33
// to 129), the sweeps in all equal the double solve's iterations for any inner tolerance
// from 1e-2 to 3e-4; the tolerance sets only the refinements, each a double residual (4
// at 1e-2, 3 from 1e-3). A float solve stops at its rounding floor, which grows like h^-2
// (4e-5 of smooth data at n = 129, 3e-4 at n = 513), so they aim at 1e-3; the last
// aims at tol itself where that is within kMixedDeepest, since one that stopped at 1e-3
// overshot tol and cost a refinement more (49 sweeps against 34 at 129^3 Dirichlet).
constexpr double kMixedInnerTol = 1e-3;
constexpr double kMixedDeepest = 1e-4;

class PoissonMixed {
 public:
  // outer and inner: backends of one kind on one device, both distributed over the same
  // slabs where the run is split. options.tol: the double residual's relative reduction;
  // options.max_iter: float iterations (sweeps) over all refinements.
  PoissonMixed(Backend<double>& outer, Backend<float>& inner, const Diffusion<double>& diffusion,
               const Forcing<double>& forcing, PoissonOptions options, double inner_tol = kMixedInnerTol);

  // Iterates from the guess in u (the double backend's memory). progress(sweeps,
  // refinement, relative residual) after each float iteration, the residual estimated as
  // the refinement's double residual times the float solve's reduction; then stop(): true
  // ends the float solve there, its correction is applied and u is the result
  // (report.stopped). The report counts sweeps in iterations and the corrections in
  // refinements; history holds the estimates, refinement_history the double residuals.
  PoissonReport solve(double* u, const std::function<void(long, long, double)>& progress = {},
                      const std::function<bool()>& stop = {});

 private:
  Backend<double>& outer_;
  Backend<float>& inner_;
  const Diffusion<double>& diffusion_;
  const Forcing<double>& forcing_;
  PoissonOptions options_;
  double inner_tol_;
};

}  // namespace adi3d
