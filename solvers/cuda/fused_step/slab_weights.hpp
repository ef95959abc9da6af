#pragma once
// The interface weights of one slab of a split z axis (fused_slab_step.hpp). The fused z
// pass solves M x = d over the slab's unknown rows (line_row's rows: a ghost plane is a
// Dirichlet row, a Neumann face's row comes halved with its data). With zero ghost values
// the solution's first and last owned rows F and L are fixed linear functions of d:
//   y_F = sum_k W_F[k] d[k],  y_L = sum_k W_L[k] d[k],
// W_F and W_L the rows F and L of M^-1. So the x pass can form them while it writes d, the
// partition method's reduced systems can be solved while the y pass runs, and the z pass
// then solves every line exactly, its ghost rows holding the neighbours' values. A unit
// value in the lower ghost row adds s e_first to the data (s = -a: the coupling of the
// row next to it), so the responses of rows F and L to it are s W_F[first] and
// s W_L[first] (w: the upper ghost, at the last unknown). Plain C++, in double.
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"

#include <vector>

namespace adi3d::cuda::fused {

template <class T>
struct SlabWeights {
  std::vector<T> w;  // 2 n_z values: W_F, then W_L (0 off the unknowns, or for a row that is none)
  // The responses of rows F and L to a unit lower (v) and upper (w) ghost value: the
  // coefficients of the reduced systems (reduced_system.hpp), 0 without that ghost.
  T v_first = 0, v_last = 0, w_first = 0, w_last = 0;
  // How the ghost values g enter the data of the z pass: d[first] += s_lo g_lo and
  // d[last] += s_hi g_hi (first, last: the unknown rows beside the ghost planes).
  T s_lo = 0, s_hi = 0;
};

// Row r of M^-1 over the unknowns first..last (M^T x = e_r by Thomas); zero where r is no
// unknown.
template <class T>
std::vector<double> inverse_row(const OperatorView<T>& op, T tau, int first, int last, int r) {
  const int n = op.n[2];
  std::vector<double> x(n, 0.0);
  if (r < first || r > last) return x;
  // Row m of M^T: sub-diagonal c_(m-1), diagonal b_m, super-diagonal a_(m+1).
  std::vector<double> cp(n, 0.0);
  double prev_cp = 0, prev_x = 0;
  for (int m = first; m <= last; ++m) {
    const double sub = m == first ? 0.0 : static_cast<double>(line_row(op, 2, tau, m - 1).c);
    const double sup = m == last ? 0.0 : static_cast<double>(line_row(op, 2, tau, m + 1).a);
    const double pivot = static_cast<double>(line_row(op, 2, tau, m).b) - sub * prev_cp;
    cp[m] = sup / pivot;
    x[m] = ((m == r ? 1.0 : 0.0) - sub * prev_x) / pivot;
    prev_cp = cp[m];
    prev_x = x[m];
  }
  for (int m = last - 1; m >= first; --m) x[m] -= cp[m] * x[m + 1];
  return x;
}

// The weights of the slab whose owned rows run from row_first to row_last of op's z lines
// (op: the slab's own operator, ghost planes as Dirichlet faces), for a ghost plane below
// (ghost_lo) and above (ghost_hi).
template <class T>
SlabWeights<T> slab_weights(const OperatorView<T>& op, T tau, int row_first, int row_last, bool ghost_lo,
                            bool ghost_hi) {
  const int n = op.n[2];
  const int first = first_unknown(op, 2), last = last_unknown(op, 2);
  const std::vector<double> wf = inverse_row(op, tau, first, last, row_first);
  const std::vector<double> wl = inverse_row(op, tau, first, last, row_last);
  SlabWeights<T> out;
  out.w.resize(2 * static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    out.w[k] = static_cast<T>(wf[k]);
    out.w[n + k] = static_cast<T>(wl[k]);
  }
  if (ghost_lo && first <= last) {
    const double s = -static_cast<double>(line_row(op, 2, tau, first).a);
    out.s_lo = static_cast<T>(s);
    out.v_first = static_cast<T>(s * wf[first]);
    out.v_last = static_cast<T>(s * wl[first]);
  }
  if (ghost_hi && first <= last) {
    const double s = -static_cast<double>(line_row(op, 2, tau, last).c);
    out.s_hi = static_cast<T>(s);
    out.w_first = static_cast<T>(s * wf[last]);
    out.w_last = static_cast<T>(s * wl[last]);
  }
  return out;
}

}  // namespace adi3d::cuda::fused
