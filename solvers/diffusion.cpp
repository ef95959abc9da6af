#include "solvers/diffusion.hpp"

namespace adi3d {

template <class T>
OperatorView<T> make_operator_view(const Diffusion<T>& d,
                                   const typename Diffusion<T>::value_type* alpha_field) {
  OperatorView<T> op{};
  for (int a = 0; a < 3; ++a) {
    op.n[a] = d.grid.n[a];
    op.inv_h[a] = static_cast<T>(1.0 / d.grid.h[a]);
    op.inv_h2[a] = static_cast<T>(1.0 / (d.grid.h[a] * d.grid.h[a]));
    op.alpha[a] = static_cast<T>(d.alpha[a]);
    // A Robin face is a Neumann one to the kernels (OperatorView::robin_h).
    auto kernel_kind = [](BoundaryKind k) { return k == BoundaryKind::robin ? BoundaryKind::neumann : k; };
    op.lo[a] = kernel_kind(d.bc.lo(a));
    op.hi[a] = kernel_kind(d.bc.hi(a));
  }
  op.alpha_field = alpha_field;
  return op;
}

template OperatorView<float> make_operator_view(const Diffusion<float>&, const float*);
template OperatorView<double> make_operator_view(const Diffusion<double>&, const double*);

}  // namespace adi3d
