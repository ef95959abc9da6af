#pragma once
// Steady problem -div(alpha grad u) = f by one direct solve where the 7-point system
// separates (spectral_solve.hpp: alpha constant per axis or a field of z alone, x and y
// with like faces): the
// exact discrete solution of the system PoissonAdi iterates on, to rounding. Written once
// against Backend: the face data, the source and the compatibility shift of a singular
// problem are PoissonAdi's (its make_compatible, stepper and finish), so both methods
// solve the same system and report alike; the backend's SpectralSolve does the rest:
//   r = A u0 + f + Neumann terms     (u0: the guess with the Dirichlet data imposed)
//   u = u0 + (-A)^-1 r               (zero face data: the data is in r)
// then a singular problem's u goes to zero mean. The report has one iteration; a relative
// residual above options.tol is the precision's rounding floor (stagnated).
#include "solvers/poisson_adi.hpp"
#include "solvers/spectral_solve.hpp"

#include <memory>
#include <optional>

namespace adi3d {

template <class T>
class PoissonSpectral {
 public:
  // Throws std::invalid_argument naming what does not separate (spectral_obstacle), and
  // BackendUnavailable where the backend has no direct solve (a split z axis).
  PoissonSpectral(Backend<T>& backend, const Diffusion<T>& diffusion, const Forcing<T>& forcing,
                  PoissonOptions options);
  ~PoissonSpectral();

  // Solves from the guess in u (backend memory; only its Dirichlet data and, for the
  // residual the report is relative to, its values matter). IncompatibleData as PoissonAdi.
  PoissonReport solve(T* u);

 private:
  Backend<T>& backend_;
  const Diffusion<T>& diffusion_;
  PoissonAdi<T> adi_;
  SpectralLayers<T> layers_;
  std::unique_ptr<SpectralSolve<T>> kernel_;  // made at the first solve, on the stepper's operator
};

// Whether the direct solve takes this problem: spectral_obstacle, a split z axis, a Robin z
// face whose h varies over it, and an alpha field that varies along x or y (a field is
// read, on the backend where it lives).
template <class T>
SpectralObstacle spectral_obstacle(const Diffusion<T>& d, const Forcing<T>& forcing, Backend<T>& backend);

// The alpha field in host memory: the Diffusion's own, or downloaded from the backend into
// `downloaded`; null where alpha is constant per axis.
template <class T>
const T* host_alpha_field(const Diffusion<T>& d, Backend<T>& backend, std::vector<T>& downloaded);

// What the faces alone keep the direct solve from: their kinds, a Robin z face whose h
// varies over it (nothing read from the backend).
template <class T>
SpectralObstacle spectral_face_obstacle(const Diffusion<T>& d, const Forcing<T>& forcing);

// alpha on each z plane where it is a field of z alone; nothing where it varies along x or
// y; empty layers where alpha is constant per axis.
template <class T>
std::optional<SpectralLayers<T>> spectral_layers(const Diffusion<T>& d, Backend<T>& backend);

}  // namespace adi3d
