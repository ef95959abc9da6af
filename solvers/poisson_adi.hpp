#pragma once
// Steady problem -div(alpha grad u) = f by ADI iteration: the Douglas step as a
// pseudo-time iteration (Douglas-Rachford in 3D; weight theta, see poisson_adi.cpp),
//   (I - tau Ax)(I - tau Ay)(I - tau Az) (u_{k+1} - u_k) = (tau / theta) (A u_k + f),
// with tau cycling through parameters spread geometrically between 1/lambda_max and
// 1/lambda_min (Wachspress-style), lambda from per-axis eigenvalue bounds of -A. Stops on
// the residual ||A u + f|| relative to that of the initial guess. Problems without
// Dirichlet faces are singular: the data must be compatible (the weighted sum of f and
// the boundary fluxes vanishes); the discretisation's small inconsistency is projected
// out, a gross one is an error, and the solution returned has zero mean. A Robin face with
// h > 0 anchors the solution as a Dirichlet one does.
#include "solvers/douglas_step.hpp"

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

namespace adi3d {

// What preconditions a Krylov solve (poisson_krylov.hpp): the direct solve of the
// plane-mean problem, a cycle of ADI steps, or (automatic) the direct solve where it takes
// the problem.
enum class KrylovPreconditioner { automatic, spectral, adi };

struct PoissonOptions {
  double tol = 1e-8;
  long max_iter = 1000;
  int cycle = 0;  // parameters per cycle; 0 chooses from the eigenvalue spread
  KrylovPreconditioner preconditioner = KrylovPreconditioner::automatic;
};

struct PoissonReport {
  const char* method = "adi";             // "adi", or "spectral" (the direct solve, poisson_spectral.hpp)
  long iterations = 0;                    // ADI iterations (mixed precision: float sweeps, all refinements')
  long refinements = 0;                   // mixed precision: the double residual's corrections
  bool converged = false;
  bool stagnated = false;                 // stopped early: no progress over 3 cycles
  bool non_finite = false;                // stopped: the residual became NaN or infinite
  bool stopped = false;                   // stopped on request (solve's stop())
  double initial_residual = 0;            // ||A u_0 + f||_2
  double relative_residual = 0;           // final, recomputed after the last update
  std::vector<double> history;            // relative residual before each update
  std::vector<double> refinement_history;  // mixed precision: the double residual before each correction
  std::vector<double> taus;               // the parameter cycle
  double lambda_min = 0, lambda_max = 0;  // bounds used
  double source_shift = 0;                // constant removed from f for compatibility
  double setup_seconds = 0;               // direct solve: planning its transforms (the first solve only);
                                          // CG: the stepper, the preconditioner and the arrays
  double solve_seconds = 0;               // direct solve: the residual, the solve and the residual after,
                                          // without the set-up (planning, the stepper's arrays); CG: the rest
};

// Incompatible data of a singular problem.
class IncompatibleData : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Eigenvalue bounds of -A (per-axis sums), and the cycle of pseudo-time steps.
struct SpectrumBounds {
  double lambda_min;
  double lambda_max;
};
// robin_h: the smallest and largest h over each Robin face (0 elsewhere).
template <class T>
SpectrumBounds spectrum_bounds(const Diffusion<T>& d, const std::array<std::array<double, 2>, 6>& robin_h = {});
std::vector<double> adi_parameters(SpectrumBounds bounds, int cycle);

// The relative residual a solve in T reaches, for decks that name no solver.tol: 1e-8 in
// double; in float, one above its rounding floor on this grid and alpha (poisson_adi.cpp).
template <class T>
double default_tolerance(const Diffusion<T>& d, const std::array<std::array<double, 2>, 6>& robin_h = {});
// Each Robin face's range of h (robin_h_range; 0 elsewhere), as the bounds above take it.
template <class T>
std::array<std::array<double, 2>, 6> robin_h_ranges(const BoundarySpec& bc, const Forcing<T>& forcing);
// Whether the faces fix u: a Dirichlet face, or a Robin face with h > 0 somewhere. Where
// none does, the problem is singular (u up to a constant, the data must balance).
template <class T>
bool anchored(const BoundarySpec& bc, const Forcing<T>& forcing);
// x *= factor on each face of the whole grid that is not periodic (nor a slab's interface):
// applied at a half, the half-cell weights of the nodes (1/2 per face a node lies on).
template <class T>
void scale_boundary_faces(const Diffusion<T>& d, Backend<T>& backend, T factor, T* x);

template <class T>
class PoissonAdi {
 public:
  PoissonAdi(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
             PoissonOptions options);
  ~PoissonAdi();

  // Iterates from the guess in u (backend memory). Calls progress(iteration, relative
  // residual) after each iteration when given, then stop() when given: true ends the
  // iteration there (report.stopped), u holding that iterate.
  PoissonReport solve(T* u, const std::function<void(long, double)>& progress = {},
                      const std::function<bool()>& stop = {});

  // solve() in its parts, for solvers built on this one (poisson_mixed.hpp):
  //   make_compatible(report); stepper = make_stepper(); stepper->initialize(u, 0);
  //   iterate(*stepper, u, report, progress, stop); finish(*stepper, u, report).
  // A singular problem's data shifted to compatibility (report.source_shift), or
  // IncompatibleData; nothing where a face holds u.
  void make_compatible(PoissonReport& report);
  // A stepper over forcing() with the iteration's weight.
  std::unique_ptr<DouglasStepper<T>> make_stepper() const;
  // The data the iteration solves with: the forcing less the compatibility shift.
  const Forcing<T>& forcing() const;
  // ADI iterations on u until the relative residual (to the first iteration's, which
  // becomes report.initial_residual) meets options.tol, options.max_iter are done, three
  // cycles stagnate, the residual is no longer finite or stop() says so. The first takes
  // parameter `phase` of the cycle (iterations that go on from earlier ones).
  void iterate(DouglasStepper<T>& stepper, T* u, PoissonReport& report,
               const std::function<void(long, double)>& progress, const std::function<bool()>& stop,
               long phase = 0) const;
  // A singular problem's u to zero mean; the relative residual of u (to
  // report.initial_residual), converged where it meets options.tol. Uses stepper's scratch.
  void finish(DouglasStepper<T>& stepper, T* u, PoissonReport& report);
  // The cycle of pseudo-time steps iterate() takes, from the spectrum's bounds (spectrum_bounds
  // unless set otherwise).
  std::vector<double> parameters() const { return adi_parameters(bounds_, options_.cycle); }
  void set_bounds(SpectrumBounds bounds) { bounds_ = bounds; }
  void set_tol(double tol) { options_.tol = tol; }
  void set_max_iter(long max_iter) { options_.max_iter = max_iter; }

 private:
  class CompatibleForcing;
  bool singular() const;
  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  PoissonOptions options_;
  SpectrumBounds bounds_;
  std::unique_ptr<CompatibleForcing> forcing_;
};

}  // namespace adi3d
