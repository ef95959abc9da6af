// operator_rhs: r = scale (A u + f + Neumann terms) on unknown nodes, 0 on Dirichlet nodes,
// in four variants (DESIGN.md §3): naive, Z-pencil register tiling, Z-pencil + shared XY
// tile (seed 003), and x neighbours by warp shuffles (register cache, seed 001). Moves
// 2 arrays per point (u in, r out) plus f and alpha when present; neighbours hit cache.
// Weights, row kinds and neighbour positions come from discretization.hpp (axis_row); the
// variants differ only in where the neighbour values are read from.
#include "solvers/cuda/cuda_backend.cuh"
#include "solvers/cuda/cuda_check.hpp"
#include "solvers/discretization.hpp"

namespace adi3d::cuda {
namespace {

constexpr int TX = StencilPolicy::tile_x;
constexpr int TY = StencilPolicy::tile_y;
constexpr int KC = StencilPolicy::k_chunk;
static_assert(TX == 32, "the shuffle variant needs one warp per x row of the tile");

// Source, Neumann terms and scaling of an unknown node, in the order of the CPU reference.
template <class T>
__device__ __forceinline__ T finish_rhs(const OperatorView<T>& op, T value, const T* f,
                                        const FacePtrs<T>& g, int i, int j, int k, std::size_t p,
                                        T scale) {
  if (f) value += f[p];
  const int idx[3] = {i, j, k};
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const RowKind kind = row_kind(idx[a], op.n[a], op.lo[a], op.hi[a]);
    const int side = kind == RowKind::neumann_lo ? 0 : kind == RowKind::neumann_hi ? 1 : -1;
    // Constant indices keep the face pointers in the parameter bank (a runtime index
    // would copy FacePtrs to the stack).
    const T* face = side == 0 ? g.g[2 * a] : side == 1 ? g.g[2 * a + 1] : nullptr;
    if (!face) continue;
    const int ua = a == 0 ? 1 : 0, va = a == 2 ? 1 : 2;
    const std::size_t fp = idx[ua] + static_cast<std::size_t>(op.n[ua]) * idx[va];
    value += neumann_term(kind, alpha_at(op, a, p), face[fp], op.inv_h[a]);
  }
  return scale * value;
}

// One axis' contribution given the neighbour values, as apply_operator forms it.
template <class T>
__device__ __forceinline__ T axis_term(const AxisRow<T>& r, T um, T uc, T up) {
  return r.w.wm * (um - uc) + r.w.wp * (up - uc);
}

// kConstAlpha: the view is known to carry no alpha field, so axis_row's alpha loads fold
// into constants (the same arithmetic, fewer loads).
template <class T, bool kConstAlpha>
__global__ void __launch_bounds__(TX* TY)
    naive_kernel(OperatorView<T> op, const T* __restrict__ u, const T* __restrict__ f,
                 FacePtrs<T> g, T scale, T* __restrict__ r) {
  if (kConstAlpha) op.alpha_field = nullptr;
  const int i = blockIdx.x * TX + threadIdx.x, j = blockIdx.y * TY + threadIdx.y;
  if (i >= op.n[0] || j >= op.n[1]) return;
  for (int k = blockIdx.z; k < op.n[2]; k += gridDim.z) {
    const std::size_t p = i + static_cast<std::size_t>(op.n[0]) * (j + static_cast<std::size_t>(op.n[1]) * k);
    r[p] = is_dirichlet_node(op, i, j, k)
               ? T(0)
               : finish_rhs(op, apply_operator(op, u, i, j, k), f, g, i, j, k, p, scale);
  }
}

enum class Pencil { registers, smem, shuffle };

// A thread owns column (i, j) over planes [k0, k0 + KC): u at k-1, k, k+1 live in registers
// and each plane costs one new load of u (seed 003, register tiling). The in-plane
// neighbours come from global memory (L1), a shared tile, or warp shuffles.
template <class T, bool kConstAlpha, Pencil kMode>
__global__ void __launch_bounds__(TX* TY, StencilPolicy::min_blocks)
    pencil_kernel(OperatorView<T> op, const T* __restrict__ u, const T* __restrict__ f,
                  FacePtrs<T> g, T scale, T* __restrict__ r) {
  __shared__ T tile[kMode == Pencil::smem ? TY + 2 : 1][kMode == Pencil::smem ? TX + 2 : 1];
  if (kConstAlpha) op.alpha_field = nullptr;
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * TX + tx, j = blockIdx.y * TY + ty;
  const int k0 = blockIdx.z * KC, k1 = min(k0 + KC, nz);
  const bool valid = i < nx && j < ny;
  const std::size_t sy = nx, sz = static_cast<std::size_t>(nx) * ny;
  std::size_t p = valid ? i + sy * j + sz * k0 : 0;
  // Fast path (constant alpha, tile interior in x and y): every row is an interior row
  // with unwrapped neighbours and the same weights, which are axis_row's weights for an
  // interior node, formed once here instead of three harmonic means per point.
  const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY;
  const bool fast_tile = kConstAlpha && i0 >= 1 && i0 + TX <= nx - 1 && j0 >= 1 && j0 + TY <= ny - 1;
  RowWeights<T> w[3];
#pragma unroll
  for (int a = 0; a < 3; ++a)
    w[a] = row_weights(RowKind::interior, op.alpha[a], op.alpha[a], op.alpha[a], op.inv_h2[a]);
  T prev = T(0), cur = T(0);
  if (valid) {
    prev = u[axis_row(op, 2, k0, p, sz).lower];
    cur = u[p];
  }
  // Every thread of the block runs the same planes: the barriers and shuffles below are
  // reached by all of them, valid or not.
  for (int k = k0; k < k1; ++k, p += sz) {
    AxisRow<T> rx{}, ry{}, rz{};
    T next = T(0);
    if (valid) {
      if (fast_tile && k >= 1 && k <= nz - 2) {
        rx = {RowKind::interior, p - 1, p + 1, w[0]};
        ry = {RowKind::interior, p - sy, p + sy, w[1]};
        rz = {RowKind::interior, p - sz, p + sz, w[2]};
      } else {
        rx = axis_row(op, 0, i, p, 1);
        ry = axis_row(op, 1, j, p, sy);
        rz = axis_row(op, 2, k, p, sz);
      }
      next = u[rz.upper];
    }
    T uxm = T(0), uxp = T(0), uym = T(0), uyp = T(0);
    if (kMode == Pencil::smem) {
      __syncthreads();  // the previous plane's tile has been read
      if (valid) {
        // Only valid threads write: an idle thread's slot may be the halo that the last
        // node of the axis loads (racecheck found the unguarded version).
        tile[ty + 1][tx + 1] = cur;
        // Halo: the block's edge threads, and the last node of an axis (whose upper
        // neighbour wraps on periodic axes), load their outer neighbour themselves.
        if (tx == 0) tile[ty + 1][0] = u[rx.lower];
        if (tx == TX - 1 || i == nx - 1) tile[ty + 1][tx + 2] = u[rx.upper];
        if (ty == 0) tile[0][tx + 1] = u[ry.lower];
        if (ty == TY - 1 || j == ny - 1) tile[ty + 2][tx + 1] = u[ry.upper];
      }
      __syncthreads();
      uxm = tile[ty + 1][tx];
      uxp = tile[ty + 1][tx + 2];
      uym = tile[ty][tx + 1];
      uyp = tile[ty + 2][tx + 1];
    } else if (kMode == Pencil::shuffle) {
      // Register cache (seed 001): a warp is one x row; lanes trade their cur values and
      // only the warp's ends (and a periodic wrap) read global memory.
      uxm = __shfl_up_sync(0xffffffffu, cur, 1);
      uxp = __shfl_down_sync(0xffffffffu, cur, 1);
      if (valid) {
        if (tx == 0) uxm = u[rx.lower];
        if (tx == TX - 1 || i == nx - 1) uxp = u[rx.upper];
        uym = u[ry.lower];
        uyp = u[ry.upper];
      }
    } else {
      if (valid) {
        uxm = u[rx.lower];
        uxp = u[rx.upper];
        uym = u[ry.lower];
        uyp = u[ry.upper];
      }
    }
    if (valid) {
      if (rx.kind == RowKind::dirichlet || ry.kind == RowKind::dirichlet ||
          rz.kind == RowKind::dirichlet) {
        r[p] = T(0);
      } else {
        T sum = T(0);
        sum += axis_term(rx, uxm, cur, uxp);
        sum += axis_term(ry, uym, cur, uyp);
        sum += axis_term(rz, prev, cur, next);
        r[p] = finish_rhs(op, sum, f, g, i, j, k, p, scale);
      }
    }
    prev = cur;
    cur = next;
  }
}

template <class T, bool kConstAlpha>
void launch_variant(StencilVariant v, const OperatorView<T>& op, const T* u, const T* f,
                    const FacePtrs<T>& g, T scale, T* r, cudaStream_t s) {
  const dim3 block(TX, TY);
  const unsigned gx = (op.n[0] + TX - 1) / TX, gy = (op.n[1] + TY - 1) / TY;
  if (v == StencilVariant::naive) {
    const unsigned gz = static_cast<unsigned>(op.n[2] < 65535 ? op.n[2] : 65535);
    naive_kernel<T, kConstAlpha><<<dim3(gx, gy, gz), block, 0, s>>>(op, u, f, g, scale, r);
    ADI3D_CUDA_LAUNCH_CHECK();
    return;
  }
  const dim3 grid(gx, gy, (op.n[2] + KC - 1) / KC);
  switch (v) {
    case StencilVariant::zpencil:
      pencil_kernel<T, kConstAlpha, Pencil::registers><<<grid, block, 0, s>>>(op, u, f, g, scale, r);
      break;
    case StencilVariant::zpencil_smem:
      pencil_kernel<T, kConstAlpha, Pencil::smem><<<grid, block, 0, s>>>(op, u, f, g, scale, r);
      break;
    default:
      pencil_kernel<T, kConstAlpha, Pencil::shuffle><<<grid, block, 0, s>>>(op, u, f, g, scale, r);
      break;
  }
  ADI3D_CUDA_LAUNCH_CHECK();
}

}  // namespace

template <class T>
void launch_operator_rhs(StencilVariant v, const OperatorView<T>& op, const T* u, const T* f,
                         const FacePtrs<T>& g, T scale, T* r, cudaStream_t s) {
  if (op.n[0] <= 0 || op.n[1] <= 0 || op.n[2] <= 0) return;
  if (op.alpha_field)
    launch_variant<T, false>(v, op, u, f, g, scale, r, s);
  else
    launch_variant<T, true>(v, op, u, f, g, scale, r, s);
}

template void launch_operator_rhs<float>(StencilVariant, const OperatorView<float>&, const float*,
                                         const float*, const FacePtrs<float>&, float, float*,
                                         cudaStream_t);
template void launch_operator_rhs<double>(StencilVariant, const OperatorView<double>&,
                                          const double*, const double*, const FacePtrs<double>&,
                                          double, double*, cudaStream_t);

}  // namespace adi3d::cuda
