#pragma once
// The host side of the fused step's line passes (fused_step_kernels.cuh), shared by the
// fused step (fused_step.cu, fused_step_var.cu) and the y/z tile line solve
// (line_solve_warp.cu): the chunk capacities of the warp solve, the tile width and
// the factors the passes read. Plain C++.
#include "solvers/discretization.hpp"
#include "solvers/line_factors.hpp"
#include "solvers/operator_view.hpp"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace adi3d::cuda::fused {

// The rows per lane chunk instantiated (odd): a line of n nodes, R = n - 2 interior rows,
// takes the smallest C with 32 C >= R; 0 where the warp solve does not take it. 21 and 25
// keep lines of 547-802 nodes from padding 33-row chunks (a 640-node line filled 60% of
// them) and shorten the solve's dependent chain (2 C + 10 steps) by a third.
constexpr int kChunkCaps[] = {3, 5, 9, 17, 21, 25, 33};

inline int chunk_cap(int n) {
  for (int cap : kChunkCaps)
    if (32 * cap >= n - 2) return cap;
  return 0;
}

// The shortest lines that take chunks of C rows, one of kChunkCaps (those of the next
// smaller capacity and 3 rows more): chunk_cap's inverse from below.
constexpr int chunk_shortest_line(int C) {
  int shortest = 3;
  for (int cap : kChunkCaps) {
    if (cap == C) return shortest;
    shortest = 32 * cap + 3;
  }
  return shortest;
}

// f(std::integral_constant<int, C>) for C = cap, one of kChunkCaps.
template <class F>
auto with_chunk_cap(int cap, F&& f) {
  switch (cap) {
    case 3: return f(std::integral_constant<int, 3>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 9: return f(std::integral_constant<int, 9>{});
    case 17: return f(std::integral_constant<int, 17>{});
    case 21: return f(std::integral_constant<int, 21>{});
    case 25: return f(std::integral_constant<int, 25>{});
    default: return f(std::integral_constant<int, 33>{});
  }
}

// Lines per y/z tile: one 128-byte row segment (64-byte rows ran at 54-59% of copy).
template <class T>
constexpr int kYZLines = 128 / static_cast<int>(sizeof(T));

// Lines per y/z tile of the alpha-field kernels (fused_step_var_kernels.cuh): 64-byte
// rows, half of kYZLines (the data and alpha tiles of 512-node lines then leave room for
// 2-3 blocks per SM).
template <class T>
constexpr int kVarYZLines = 64 / static_cast<int>(sizeof(T));

// Where the x pass's copy of a cyclic line's z starts in its chunk factors (pass_factors),
// past alpha, Gf, Gb (3 x 32 C), corner_ratio, the inverse denominator and z (2 + 32 C), at
// a multiple of 32 values: z by warp rows, value q of lane p (node p C + q) at q 32 + p, so
// that a row's loads by the 32 lanes take one 128-byte segment (from z itself, C values
// apart, each of a line's C loads took 32 sectors: 146 M sectors in the float x pass of
// 512^3, 3 M without a periodic axis, now 22 M; the double pass 779 -> 740 us, the float
// one unchanged; ncu, H200).
template <int C>
constexpr std::size_t kCyclicZByRows = 4 * 32 * static_cast<std::size_t>(C) + 32;
// The same for a chunk capacity known at run time.
inline std::size_t cyclic_z_by_rows_offset(int cap) {
  return with_chunk_cap(cap, [](auto C) { return kCyclicZByRows<C.value>; });
}

// Values of pass_factors for lines of n nodes and chunk capacity cap; cyclic lines (a
// periodic axis) add their Sherman-Morrison correction: corner_ratio, the inverse
// denominator and z, padded with zeros to 32 cap values, then z by warp rows
// (kCyclicZByRows), so that the x pass corrects its padding rows without a bound.
inline std::size_t pass_factor_count(int n, int cap, bool cyclic = false) {
  const std::size_t chunk = static_cast<std::size_t>(cap);
  return 3 * static_cast<std::size_t>(n) + (cyclic ? cyclic_z_by_rows_offset(cap) + 32 * chunk : 3 * 32 * chunk);
}

inline std::size_t axis_stride(const int n[3], int axis) {
  return axis == 0 ? 1 : axis == 1 ? static_cast<std::size_t>(n[0]) : static_cast<std::size_t>(n[0]) * n[1];
}

// The warp solve's Gf and Gb (32 cap each, after alpha) from alpha (the inverse pivots;
// lane p owns rows [p C, p C + C); padding rows have alpha 0) and s.
template <class T>
void chunk_responses(T* alpha, T bs, int cap) {
  const int C = cap;
  T* gf = alpha + 32 * C;
  T* gb = gf + 32 * C;
  for (int p = 0; p < 32; ++p) {
    double g = 1;  // products of the betas the kernel uses (s alpha, rounded to T)
    for (int q = 0; q < C; ++q) gf[p * C + q] = static_cast<T>(g *= static_cast<double>(bs * alpha[p * C + q]));
    g = 1;
    for (int q = C - 1; q >= 0; --q) gb[p * C + q] = static_cast<T>(g *= static_cast<double>(bs * alpha[p * C + q]));
  }
}

// The unknowns along an axis: from 1 or 0 after a Dirichlet or Neumann face to n-2 or n-1
// before one; 0 to n-1 on a periodic axis (cyclic lines: cyclic_tile_line_factors).
template <class T>
int first_unknown(const OperatorView<T>& op, int axis) {
  return op.lo[axis] == BoundaryKind::dirichlet ? 1 : 0;
}
template <class T>
int last_unknown(const OperatorView<T>& op, int axis) {
  return op.hi[axis] == BoundaryKind::dirichlet ? op.n[axis] - 2 : op.n[axis] - 1;
}
template <class T>
int unknowns(const OperatorView<T>& op, int axis) {
  return last_unknown(op, axis) - first_unknown(op, axis) + 1;
}
// The chunk capacity of the warp solve for op's lines along axis: their unknowns, which
// Neumann ends add to (a line of n nodes between Dirichlet faces has n - 2).
template <class T>
int unknowns_chunk_cap(const OperatorView<T>& op, int axis) {
  return chunk_cap(unknowns(op, axis) + 2);
}

// f(std::bool_constant<material>, std::bool_constant<neumann>): the variable step's
// kernels are built per material index (or alpha) and per Neumann faces (or none).
template <class F>
auto with_var_kinds(bool material, bool neumann, F&& f) {
  using Yes = std::true_type;
  using No = std::false_type;
  if (material) return neumann ? f(Yes{}, Yes{}) : f(Yes{}, No{});
  return neumann ? f(No{}, Yes{}) : f(No{}, No{});
}

// The bit of a periodic axis in the passes' face mask (PassArgs::unknown_faces), past
// the six face bits.
constexpr int kPeriodicAxesBit = 6;

// The faces of op whose nodes are unknowns, as the passes' arguments hold them
// (unknown_faces): bit face_index of a Neumann face and of both faces of a periodic axis,
// whose axis also sets bit kPeriodicAxesBit + axis.
template <class T>
int unknown_face_mask(const OperatorView<T>& op) {
  int mask = 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (op.lo[axis] == BoundaryKind::periodic) mask |= (3 << face_index(axis, 0)) | (1 << (kPeriodicAxesBit + axis));
    for (int side = 0; side < 2; ++side)
      if ((side ? op.hi[axis] : op.lo[axis]) == BoundaryKind::neumann) mask |= 1 << face_index(axis, side);
  }
  return mask;
}

// Row m of (I - tau A_axis) on constant-alpha lines as the line passes solve it, by the
// same point rules (axis_row, implicit_row) as every other line solver: a Neumann end row
// (wm = 0, wp = 2 w, or the mirror) is halved so that every off-diagonal is -s, as the
// warp solve assumes (its rhs is halved with it).
template <class T>
TriRow<T> line_row(const OperatorView<T>& op, int axis, T tau, int m) {
  require_lines_alike(op, axis);
  const std::size_t st = axis_stride(op.n, axis);
  TriRow<T> row = implicit_row(axis_row(op, axis, m, m * st, st), tau);
  const RowKind kind = row_kind(m, op.n[axis], op.lo[axis], op.hi[axis]);
  if (kind == RowKind::neumann_lo || kind == RowKind::neumann_hi) {
    row.a *= T(0.5);
    row.b *= T(0.5);
    row.c *= T(0.5);
  }
  return row;
}

// The inverse pivots of the elimination of the unknowns first..last of constant-alpha
// lines along axis (inv[m - first]) of line_row's rows; Dirichlet ends are outside.
// Returns s = -a of the interior rows, read off the (halved) rows themselves: a line of
// two nodes has no interior row, and its node 1 is an end row.
template <class T>
T line_inverse_pivots(const OperatorView<T>& op, int axis, T tau, int first, int last, T* inv) {
  T cp_prev = T(0), s = T(0);
  for (int m = first; m <= last; ++m) {
    const TriRow<T> row = line_row(op, axis, tau, m);
    s = row.a != T(0) ? -row.a : row.c != T(0) ? -row.c : s;
    const T a = m == first ? T(0) : row.a;
    inv[m - first] = T(1) / (row.b - a * cp_prev);
    cp_prev = row.c * inv[m - first];
  }
  return s;
}

// The warp solve's factors (alpha, Gf, Gb: 3 x 32 cap values to out, zeroed) for the
// unknowns first..last (at most 32 cap of them) of constant-alpha lines along axis:
// alpha holds their inverse pivots (line_inverse_pivots). Returns s.
template <class T>
T tile_line_factors(const OperatorView<T>& op, int axis, T tau, int first, int last, int cap, T* out) {
  const T bs = line_inverse_pivots(op, axis, tau, first, last, out);
  chunk_responses(out, bs, cap);
  return bs;
}

// Cyclic lines (a periodic axis of constant alpha, n >= 3 nodes, all unknowns) by
// Sherman-Morrison, from the factors the CPU backend solves them with (line_factors.hpp):
// the warp solve's alpha, Gf, Gb (3 x 32 cap values to out, zeroed) of the modified matrix,
// whose first and last diagonal entries absorb the corners (its off-diagonals are all -s,
// as the warp solve assumes), and the correction that makes its solution y the cyclic
// one: x = y - (y_0 + corner_ratio y_{n-1}) inv_denominator z.
template <class T>
struct CyclicTileFactors {
  T s;
  T corner_ratio, inv_denominator;
  std::vector<T> z;  // n values
};
template <class T>
CyclicTileFactors<T> cyclic_tile_line_factors(const OperatorView<T>& op, int axis, T tau, int cap, T* out) {
  LineFactors<T> f = factor_line(op, axis, tau);
  std::copy(f.inv.begin(), f.inv.end(), out);
  const T s = -f.a[1];
  chunk_responses(out, s, cap);
  return {s, f.corner_ratio, T(1) / f.denominator, std::move(f.z)};
}

// Shared factors of (I - tau A_axis) over the unknowns of constant-alpha lines along axis
// (first_unknown..last_unknown, R of them), for the fused step. To out (pass_factor_count
// values, zeroed): inv, a*inv, cp (n each, at the rows' nodes: the fallback kernel's),
// then, where cap is not 0, the warp solve's alpha, Gf, Gb (tile_line_factors of those
// rows). Returns s.
// Cyclic lines (a periodic axis, cap not 0) have no fallback factors (the fallback kernel
// solves between Dirichlet faces; the fused step declines them there): the warp solve's
// factors of the modified matrix follow the zeros, then its correction and z by warp rows
// (pass_factor_count).
template <class T>
T pass_factors(const OperatorView<T>& op, int axis, T tau, int cap, T* out) {
  const int n = op.n[axis];
  if (op.lo[axis] == BoundaryKind::periodic) {
    T* chunk = out + 3 * static_cast<std::size_t>(n);
    const CyclicTileFactors<T> c = cyclic_tile_line_factors(op, axis, tau, cap, chunk);
    T* correction = chunk + 3 * 32 * cap;
    correction[0] = c.corner_ratio;
    correction[1] = c.inv_denominator;
    std::copy(c.z.begin(), c.z.end(), correction + 2);
    T* z_by_rows = chunk + cyclic_z_by_rows_offset(cap);
    for (int node = 0; node < n; ++node) z_by_rows[node % cap * 32 + node / cap] = c.z[node];
    return c.s;
  }
  const int first = first_unknown(op, axis), last = last_unknown(op, axis);
  T* inv = out;
  T* ainv = inv + n;
  T* cp = inv + 2 * n;
  const T bs = line_inverse_pivots(op, axis, tau, first, last, inv + first);
  for (int m = first; m <= last; ++m) {
    const TriRow<T> row = line_row(op, axis, tau, m);
    ainv[m] = row.a * inv[m];
    cp[m] = row.c * inv[m];
  }
  if (cap != 0) {
    T* alpha = cp + n;
    for (int r = 0; r <= last - first; ++r) alpha[r] = inv[first + r];
    chunk_responses(alpha, bs, cap);
  }
  return bs;
}

}  // namespace adi3d::cuda::fused
