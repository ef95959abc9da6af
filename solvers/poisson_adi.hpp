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
#include <stdexcept>
#include <vector>

namespace adi3d {

struct PoissonOptions {
  double tol = 1e-8;
  long max_iter = 1000;
  int cycle = 0;  // parameters per cycle; 0 chooses from the eigenvalue spread
};

struct PoissonReport {
  long iterations = 0;
  bool converged = false;
  bool stagnated = false;                 // stopped early: no progress over 3 cycles
  bool non_finite = false;                // stopped: the residual became NaN or infinite
  bool stopped = false;                   // stopped on request (solve's stop())
  double initial_residual = 0;            // ||A u_0 + f||_2
  double relative_residual = 0;           // final, recomputed after the last update
  std::vector<double> history;            // relative residual before each update
  std::vector<double> taus;               // the parameter cycle
  double lambda_min = 0, lambda_max = 0;  // bounds used
  double source_shift = 0;                // constant removed from f for compatibility
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

 private:
  class CompatibleForcing;
  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  PoissonOptions options_;
  std::unique_ptr<CompatibleForcing> forcing_;
};

}  // namespace adi3d
