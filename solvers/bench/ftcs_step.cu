// The explicit (FTCS) reference step of `adi3d bench adi`: u_new = u + dt A u in one
// Z-pencil kernel (explicit_stencil.cuh), 2 arrays per point. Forward Euler is stable
// for dt <= 1 / (2 sum_a alpha_a / h_a^2) (h^2 / (6 alpha) on a uniform cube).
#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/backend_cast.cuh"
#include "solvers/bench/explicit_stencil.cuh"
#include "solvers/discretization.hpp"

#include <stdexcept>

namespace adi3d::cuda {
namespace {

template <class T>
void require_dirichlet_constant(const Diffusion<T>& d, const char* who) {
  for (int f = 0; f < 6; ++f)
    if (d.bc.face[f] != BoundaryKind::dirichlet)
      throw std::invalid_argument(std::string(who) + ": every face must be Dirichlet");
  if (!d.alpha_field.empty() || d.backend_alpha)
    throw std::invalid_argument(std::string(who) + ": alpha must be constant");
  for (int a = 0; a < 3; ++a)
    if (d.grid.n[a] < 3) throw std::invalid_argument(std::string(who) + ": at least 3 nodes per axis");
}

}  // namespace

template <class T>
FtcsStep<T>::FtcsStep(Backend<T>& backend, const Diffusion<T>& d, double dt)
    : backend_(backend), grid_(d.grid), dt_(static_cast<T>(dt)) {
  require_dirichlet_constant(d, "FtcsStep");
  cuda_backend_of(backend);  // throws on another backend
  for (int a = 0; a < 3; ++a) {
    const T alpha = static_cast<T>(d.alpha[a]);
    const T inv_h2 = static_cast<T>(1.0 / (d.grid.h[a] * d.grid.h[a]));
    weight_[a] = row_weights(RowKind::interior, alpha, alpha, alpha, inv_h2).wm;
  }
}

template <class T>
void FtcsStep<T>::step(const T* u, T* u_new) {
  const int n[3] = {grid_.n[0], grid_.n[1], grid_.n[2]};
  launch_explicit_stencil<T, ExplicitOut::ftcs_xyz>(n, weight_, dt_, u, u_new,
                                                    cuda_backend_of(backend_).stream());
}

template class FtcsStep<float>;
template class FtcsStep<double>;

}  // namespace adi3d::cuda
