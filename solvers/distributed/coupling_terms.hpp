#pragma once
// One node's coupling terms of the partition method (Backend::add_coupling_terms), shared
// by the CPU loop and the CUDA kernel: y[p] + v[c] a[i] + w[c] b[i], each part left out
// where its pointer is null. p indexes the grid array, c the responses (p per node, the
// plane per plane), i the broadcast planes.
#include "solvers/host_device.hpp"

#include <cstddef>

namespace adi3d {

template <class T>
ADI3D_HD T coupling_term(const T* y, const T* v, const T* a, const T* w, const T* b, std::size_t p, std::size_t c,
                         std::size_t i) {
  T sum = y ? y[p] : T(0);
  if (v) sum += v[c] * a[i];
  if (w) sum += w[c] * b[i];
  return sum;
}

}  // namespace adi3d
