#include "physics/formula_forcing.hpp"

#include "physics/grid_functions.hpp"
#include "solvers/face_layout.hpp"

#include <algorithm>

namespace adi3d::physics {

template <class T>
void FormulaForcing<T>::source(double t, T* out) const {
  sample_grid(source_, grid_, t, out);
}

template <class T>
void FormulaForcing<T>::boundary(int face, double t, T* out) const {
  if (!faces_[face]) {
    std::fill(out, out + face_size(grid_, face), T(0));
    return;
  }
  sample_face(*faces_[face], grid_, face, t, out);
}

template class FormulaForcing<float>;
template class FormulaForcing<double>;

}  // namespace adi3d::physics
