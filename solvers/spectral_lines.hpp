#pragma once
// Point rules of the GPU's direct solve on a box whose x and y axes are sine or cosine
// (solvers/cuda/spectral/line_transforms.cu): each axis's DST-I or DCT-I of a line taken
// from the real FFT (cuFFT's R2C, FFTW's r2c) of the line's odd or even extension, one axis
// at a time, between compact arrays the size of the unknowns:
//
//   before   e_t = sign a_node for t = 0 .. 2 m - 1, m = n - 1, (node, sign) = mirror(kind,
//            t, n) (spectral_modes.hpp), a_j the line's value at node j (0 outside the
//            axis's unknown nodes)
//   FFT      E_k = sum_t e_t exp(-2 pi i t k / (2 m)),  k = 0 .. m
//   after    X_k = line_mode_value(kind, E_k) for the stored wavenumbers k (the axis's
//            unknown range: 1 .. m - 1 on a sine axis, 0 .. m on a cosine one)
//
// X_k is the transform at wavenumber k: sine X_k = sum_{j=1..m-1} a_j sin(pi j k / m);
// cosine X_k = (a_0 + (-1)^k a_m) / 2 + sum_{j=1..m-1} a_j cos(pi j k / m). Either is its own
// inverse times m / 2, so the way back is the same passes. E_k is -2 i X_k (sine) or 2 X_k
// (cosine).
//
// Why not a real FFT of length m with a running sum for the odd wavenumbers (Numerical
// Recipes' sinft, cosft1): it was tried and measured (docs/performance.md): about 1.4x faster
// on an H200, but the running sum adds up the FFT's rounding over m / 2 terms, and the
// solve's residual grew 10x on a Dirichlet box and 25-190x on a Neumann one at 257^3 and
// 513^3 (3e-10 in double: past solver.tol's 1e-10).
#include "solvers/spectral_solve.hpp"

namespace adi3d {

// X_k from the extension's E_k = re + i im.
template <class T>
ADI3D_HD T line_mode_value(SpectralAxis kind, T re, T im) {
  return kind == SpectralAxis::sine ? T(-0.5) * im : T(0.5) * re;
}

// The padded length, in values, of a line's extension and its transform (m + 1 complex
// values in place of 2 m real ones).
ADI3D_HD int line_slots(int m) { return 2 * (m + 1); }

}  // namespace adi3d
