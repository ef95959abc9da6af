// CPU line solves: (I - tau A_axis) x = d for every grid line along an axis. Lines are
// gathered in blocks into system-interleaved scratch (a blocked transpose for x lines),
// solved with vectorised Thomas sweeps, and scattered back. Periodic axes are cyclic.
#include "solvers/cpu/batched_block_solve.hpp"
#include "solvers/cpu/cpu_backend.hpp"
#include "solvers/discretization.hpp"
#include "solvers/poison.hpp"

#include <algorithm>
#include <vector>

namespace adi3d::cpu {
namespace {

constexpr int kBlock = 32;  // lines per block: 5 scratch arrays of n*32 stay in L2

struct LineBatch {
  int n;               // rows per line
  std::size_t stride;  // distance of consecutive rows
  std::size_t q_step;  // distance of consecutive lines in a block
  int lines_u;         // lines along the block direction
  int lines_v;         // blocks are repeated over this direction
  std::size_t v_step;  // distance of consecutive v positions
};

LineBatch line_batch(const int n[3], int axis) {
  const std::size_t nx = n[0], nxy = static_cast<std::size_t>(n[0]) * n[1];
  if (axis == 0) return {n[0], 1, nx, n[1], n[2], nxy};    // block over j, repeat over k
  if (axis == 1) return {n[1], nx, 1, n[0], n[2], nxy};    // block over i, repeat over k
  return {n[2], nxy, 1, n[0], n[1], nx};                   // block over i, repeat over j
}

}  // namespace

template <class T>
void CpuBackend<T>::solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) {
  if (!lines_alike(op, axis))
    solve_lines_general(op, axis, tau, d);
  else
    solve_lines_constant(op, axis, tau, d);
}

template <class T>
const LineFactors<T>& CpuBackend<T>::factors(const OperatorView<T>& op, int axis, T tau) {
  const LineMatrixKey<T> key = line_matrix_key(op, axis);
  for (const FactorEntry& e : factor_cache_)
    if (e.axis == axis && e.key == key && e.tau == tau) return e.factors;
  if (factor_cache_.size() >= 48) factor_cache_.pop_front();
  factor_cache_.push_back({axis, key, tau, factor_line(op, axis, tau)});
  return factor_cache_.back().factors;
}

template <class T>
void CpuBackend<T>::solve_lines_constant(const OperatorView<T>& op, int axis, T tau, T* d) {
  const LineFactors<T>& f = factors(op, axis, tau);
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  const std::size_t nxy = static_cast<std::size_t>(nx) * ny;
  if (axis == 1 || axis == 2) {
    // y lines of a plane (or z lines of an x-z slab) are already interleaved: row m of
    // line i sits at i + m * stride, so the sweeps run in place, vectorised over i.
    const int outer = axis == 1 ? nz : ny;
    const std::size_t outer_step = axis == 1 ? nxy : static_cast<std::size_t>(nx);
    const std::size_t stride = axis == 1 ? static_cast<std::size_t>(nx) : nxy;
#pragma omp parallel
    {
      std::vector<T> correction = scratch_vector<T>(nx);
#pragma omp for schedule(static)
      for (int o = 0; o < outer; ++o) solve_factored(f, nx, d + o * outer_step, stride, correction.data());
    }
    return;
  }
  // x lines are contiguous: transpose blocks of kBlock lines into interleaved scratch.
  const int blocks_per_plane = (ny + kBlock - 1) / kBlock;
#pragma omp parallel
  {
    std::vector<T> block = scratch_vector<T>(static_cast<std::size_t>(nx) * kBlock);
    std::vector<T> correction = scratch_vector<T>(kBlock);
#pragma omp for schedule(static)
    for (int blk = 0; blk < blocks_per_plane * nz; ++blk) {
      const int k = blk / blocks_per_plane, j0 = (blk % blocks_per_plane) * kBlock;
      const int B = std::min(kBlock, ny - j0);
      T* origin = d + k * nxy + static_cast<std::size_t>(j0) * nx;
      for (int q = 0; q < B; ++q)
        for (int m = 0; m < nx; ++m) block[static_cast<std::size_t>(m) * B + q] = origin[q * nx + m];
      solve_factored(f, B, block.data(), static_cast<std::size_t>(B), correction.data());
      for (int q = 0; q < B; ++q)
        for (int m = 0; m < nx; ++m) origin[q * nx + m] = block[static_cast<std::size_t>(m) * B + q];
    }
  }
}

template <class T>
void CpuBackend<T>::solve_lines_general(const OperatorView<T>& op, int axis, T tau, T* d) {
  const LineBatch lb = line_batch(op.n, axis);
  const bool cyclic = op.lo[axis] == BoundaryKind::periodic;
  const int blocks_u = (lb.lines_u + kBlock - 1) / kBlock;
  const int total = blocks_u * lb.lines_v;
#pragma omp parallel
  {
    const std::size_t cap = static_cast<std::size_t>(lb.n) * kBlock;
    std::vector<T> buf = scratch_vector<T>(7 * cap);
    BlockScratch<T> s{buf.data(), buf.data() + cap, buf.data() + 2 * cap, buf.data() + 3 * cap,
                      buf.data() + 4 * cap, buf.data() + 5 * cap, buf.data() + 6 * cap};
#pragma omp for schedule(static)
    for (int blk = 0; blk < total; ++blk) {
      const int v = blk / blocks_u;
      const int u0 = (blk % blocks_u) * kBlock;
      const int B = std::min(kBlock, lb.lines_u - u0);
      const std::size_t origin = v * lb.v_step + u0 * lb.q_step;
      for (int m = 0; m < lb.n; ++m) {
        for (int q = 0; q < B; ++q) {
          const std::size_t p = origin + q * lb.q_step + m * lb.stride;
          const TriRow<T> row = implicit_row(axis_row(op, axis, m, p, lb.stride), tau);
          const std::size_t e = static_cast<std::size_t>(m) * B + q;
          s.a[e] = row.a;
          s.b[e] = row.b;
          s.c[e] = row.c;
          s.d[e] = d[p];
        }
      }
      if (cyclic)
        cyclic_thomas_block(lb.n, B, s);
      else
        thomas_block(lb.n, B, s.a, s.b, s.c, s.d, s.cp);
      for (int m = 0; m < lb.n; ++m)
        for (int q = 0; q < B; ++q)
          d[origin + q * lb.q_step + m * lb.stride] = s.d[static_cast<std::size_t>(m) * B + q];
    }
  }
}

template void CpuBackend<float>::solve_lines(const OperatorView<float>&, int, float, float*);
template void CpuBackend<double>::solve_lines(const OperatorView<double>&, int, double, double*);
template const LineFactors<float>& CpuBackend<float>::factors(const OperatorView<float>&, int, float);
template const LineFactors<double>& CpuBackend<double>::factors(const OperatorView<double>&, int, double);
template void CpuBackend<float>::solve_lines_constant(const OperatorView<float>&, int, float, float*);
template void CpuBackend<double>::solve_lines_constant(const OperatorView<double>&, int, double, double*);
template void CpuBackend<float>::solve_lines_general(const OperatorView<float>&, int, float, float*);
template void CpuBackend<double>::solve_lines_general(const OperatorView<double>&, int, double, double*);

}  // namespace adi3d::cpu
