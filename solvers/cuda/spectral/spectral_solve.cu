// The CUDA backend's direct solve of -A e = r (spectral_solve.hpp). cuFFT has no DST-I or
// DCT-I, so each unknown z plane is extended along x and y to its transform's period
// (odd across Dirichlet faces, even across Neumann ones, as is along periodic axes: the
// extended periodic problem's solution is the extension of the solution) and transformed
// by one batched in-place R2C; every complex mode is then solved along z by Thomas in its
// own thread (modes the fast index, so each plane's loads coalesce; cyclic z by
// Sherman-Morrison, the constant mode with its first node pinned); C2R brings it back.
// Bytes per unknown point, periods about 2n per axis (Dirichlet or Neumann): the extension
// reads r once and writes 4 values; R2C and C2R pass over 4 values a few times each; the z
// solve reads and writes 4 values twice and its pivots once; the last pass reads the
// unknowns' values and adds them to u. Working memory: about 6 values a point.
#include "solvers/cuda/spectral/spectral_solve.cuh"

#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/spectral/cufft_calls.cuh"
#include "solvers/spectral_rows.hpp"

#include <algorithm>
#include <vector>

namespace adi3d::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kModeThreads = 256;
constexpr int kMaxGridYZ = 65535;

struct SpectralGeometry {
  int n[3];
  SpectralAxis kind[2];
  int period[2];
  int complex_row;  // period[0] / 2 + 1 complex values per extended row
  int real_row;     // 2 complex_row: the in-place transform's padded real row
  SpectralRange range[3];
  bool z_singular;  // no Dirichlet face on z: the mode of wavenumbers (0, 0) is singular along z
  bool z_periodic;
};

// The node and sign that position t of an axis's period holds.
struct Mirror {
  int node;
  int sign;
};
__device__ __forceinline__ Mirror mirror(SpectralAxis kind, int t, int n) {
  if (kind == SpectralAxis::fourier || t <= n - 1) return {t, 1};
  return {2 * (n - 1) - t, kind == SpectralAxis::sine ? -1 : 1};
}

// Each unknown plane's extension, written into the padded rows of the in-place transform.
template <class T>
__global__ void __launch_bounds__(kThreads) extend_kernel(const T* __restrict__ r, T* __restrict__ buf,
                                                          SpectralGeometry g) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= g.real_row) return;
  const Mirror mx = t < g.period[0] ? mirror(g.kind[0], t, g.n[0]) : Mirror{0, 0};
  const std::size_t nx = static_cast<std::size_t>(g.n[0]), nxy = nx * g.n[1];
  for (int s = blockIdx.y; s < g.period[1]; s += gridDim.y) {
    const Mirror my = mirror(g.kind[1], s, g.n[1]);
    const int sign = mx.sign * my.sign;
    for (int kk = blockIdx.z; kk < g.range[2].count; kk += gridDim.z) {
      const std::size_t k = static_cast<std::size_t>(g.range[2].first + kk);
      const T v = sign == 0 ? T(0) : static_cast<T>(sign) * r[mx.node + nx * my.node + nxy * k];
      buf[(static_cast<std::size_t>(kk) * g.period[1] + s) * g.real_row + t] = v;
    }
  }
}

// One thread per complex mode (kx, ky): the tridiagonal system along z of -A_z + sigma,
// sigma = the x and y eigenvalues, on the mode's real and imaginary parts. rows: the z
// rows (lower, diag, upper, scale per plane, spectral_z_row); cp, q: a value per mode and plane.
template <class T>
__global__ void __launch_bounds__(kModeThreads) z_modes_kernel(T* __restrict__ buf, T* __restrict__ cp,
                                                               T* __restrict__ q, const T* __restrict__ rows,
                                                               SpectralGeometry g, double wx, double wy) {
  const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
  const std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= modes) return;
  const int kx = static_cast<int>(m % g.complex_row), ky = static_cast<int>(m / g.complex_row);
  const T sigma = static_cast<T>(spectral_eigenvalue(wx, kx, g.period[0]) + spectral_eigenvalue(wy, ky, g.period[1]));
  const int k0 = g.range[2].first, mz = g.range[2].count;
  T* v = buf + 2 * m;
  const std::size_t stride = 2 * modes;
  auto lower_of = [&](int kk) { return rows[4 * (k0 + kk)]; };
  auto diag_of = [&](int kk) { return rows[4 * (k0 + kk) + 1]; };
  auto upper_of = [&](int kk) { return rows[4 * (k0 + kk) + 2]; };
  // The plane's diagonal with the mode's x and y eigenvalues (times the plane's alpha over layers).
  auto pivot_of = [&](int kk) { return rows[4 * (k0 + kk) + 1] + rows[4 * (k0 + kk) + 3] * sigma; };

  if (g.z_singular && kx == 0 && ky == 0) {
    // The constant's line: node 0 held at 0 (the dropped row 0 is the compatibility the
    // caller's shift met); a sine axis's extension leaves this mode 0 anyway.
    int first = 1;
    T re_prev = 0, im_prev = 0, c_prev = 0;
    for (int kk = first; kk < mz; ++kk) {
      const T lower = kk == first ? T(0) : lower_of(kk);
      const T upper = kk == mz - 1 ? T(0) : upper_of(kk);
      const T id = T(1) / (diag_of(kk) + lower * c_prev);
      const T c = -upper * id;
      T* x = v + stride * kk;
      re_prev = (x[0] + lower * re_prev) * id;
      im_prev = (x[1] + lower * im_prev) * id;
      x[0] = re_prev;
      x[1] = im_prev;
      cp[modes * kk + m] = c;
      c_prev = c;
    }
    for (int kk = mz - 2; kk >= first; --kk) {
      T* x = v + stride * kk;
      const T* xn = x + stride;
      const T c = cp[modes * kk + m];
      x[0] -= c * xn[0];
      x[1] -= c * xn[1];
    }
    v[0] = v[1] = T(0);
    return;
  }

  // Thomas; on a periodic z the ends of Sherman-Morrison's T' (as the CPU's solve_cyclic:
  // corners -lower_0 and -upper_last, gamma = -b_0) and the second right-hand side p in q.
  const bool cyclic = g.z_periodic;
  const T b0 = pivot_of(0);
  const T gamma = -b0;
  T re_prev = 0, im_prev = 0, q_prev = 0, c_prev = 0;
  for (int kk = 0; kk < mz; ++kk) {
    const T lower = kk == 0 ? T(0) : lower_of(kk);
    const T upper = kk == mz - 1 ? T(0) : upper_of(kk);
    T b = pivot_of(kk);
    if (cyclic && kk == 0) b -= gamma;
    if (cyclic && kk == mz - 1) b += lower_of(0) * upper_of(kk) / b0;
    const T id = T(1) / (b + lower * c_prev);
    const T c = -upper * id;
    T* x = v + stride * kk;
    re_prev = (x[0] + lower * re_prev) * id;
    im_prev = (x[1] + lower * im_prev) * id;
    x[0] = re_prev;
    x[1] = im_prev;
    cp[modes * kk + m] = c;
    c_prev = c;
    if (cyclic) {
      const T p = kk == 0 ? gamma : kk == mz - 1 ? -upper_of(kk) : T(0);
      q_prev = (p + lower * q_prev) * id;
      q[modes * kk + m] = q_prev;
    }
  }
  T re_next = re_prev, im_next = im_prev, q_next = q_prev;
  for (int kk = mz - 2; kk >= 0; --kk) {
    T* x = v + stride * kk;
    const T c = cp[modes * kk + m];
    re_next = x[0] - c * re_next;
    im_next = x[1] - c * im_next;
    x[0] = re_next;
    x[1] = im_next;
    if (cyclic) {
      q_next = q[modes * kk + m] - c * q_next;
      q[modes * kk + m] = q_next;
    }
  }
  if (!cyclic) return;
  // e = y - (v.y / (1 + v.q)) q with v = (1, 0..0, -lower_0 / gamma).
  const T tail = -lower_of(0) / gamma;
  const T* last = v + stride * (mz - 1);
  const T denom = T(1) + q[m] + tail * q[modes * (mz - 1) + m];
  const T f_re = (v[0] + tail * last[0]) / denom;
  const T f_im = (v[1] + tail * last[1]) / denom;
  for (int kk = 0; kk < mz; ++kk) {
    T* x = v + stride * kk;
    const T qk = q[modes * kk + m];
    x[0] -= f_re * qk;
    x[1] -= f_im * qk;
  }
}

// u += scale e on the unknown nodes, e read from the back-transformed extension.
template <class T>
__global__ void __launch_bounds__(kThreads) add_solution_kernel(const T* __restrict__ buf, T* __restrict__ u,
                                                                SpectralGeometry g, T scale) {
  const int di = blockIdx.x * blockDim.x + threadIdx.x;
  if (di >= g.range[0].count) return;
  const int i = g.range[0].first + di;
  const std::size_t nx = static_cast<std::size_t>(g.n[0]), nxy = nx * g.n[1];
  for (int dj = blockIdx.y; dj < g.range[1].count; dj += gridDim.y) {
    const int j = g.range[1].first + dj;
    for (int kk = blockIdx.z; kk < g.range[2].count; kk += gridDim.z) {
      const std::size_t k = static_cast<std::size_t>(g.range[2].first + kk);
      u[i + nx * j + nxy * k] += scale * buf[(static_cast<std::size_t>(kk) * g.period[1] + j) * g.real_row + i];
    }
  }
}

unsigned grid_dim(int n) { return static_cast<unsigned>(std::min(std::max(n, 1), kMaxGridYZ)); }

template <class T>
class CudaSpectralSolve final : public SpectralSolve<T> {
 public:
  CudaSpectralSolve(const OperatorView<T>& op, const SpectralLayers<T>& layers, Backend<T>& backend,
                    cudaStream_t stream, int device)
      : stream_(stream), device_(device) {
    const bool layered = !layers.alpha.empty();
    BoundarySpec bc;
    for (int a = 0; a < 3; ++a) bc.face[2 * a] = op.lo[a], bc.face[2 * a + 1] = op.hi[a];
    for (int a = 0; a < 3; ++a) {
      g_.n[a] = op.n[a];
      g_.range[a] = unknown_range(op.n[a], op.lo[a], op.hi[a]);
    }
    for (int a = 0; a < 2; ++a) {
      g_.kind[a] = spectral_axis(bc, a);
      g_.period[a] = spectral_period(g_.kind[a], op.n[a]);
    }
    g_.complex_row = g_.period[0] / 2 + 1;
    g_.real_row = 2 * g_.complex_row;
    g_.z_singular = op.lo[2] != BoundaryKind::dirichlet && op.hi[2] != BoundaryKind::dirichlet;
    g_.z_periodic = op.lo[2] == BoundaryKind::periodic;
    wx_ = axis_weight(op, 0, layered);
    wy_ = axis_weight(op, 1, layered);
    scale_ = static_cast<T>(1.0 / (static_cast<double>(g_.period[0]) * g_.period[1]));

    std::vector<T> rows(4 * static_cast<std::size_t>(op.n[2]));
    for (int k = 0; k < op.n[2]; ++k) {
      const SpectralZRow<T> z = spectral_z_row(op, k, layered ? layers.alpha.data() : nullptr);
      rows[4 * k] = z.lower, rows[4 * k + 1] = z.diag, rows[4 * k + 2] = z.upper, rows[4 * k + 3] = z.scale;
    }
    rows_ = backend.allocate(rows.size());
    backend.upload(rows.data(), rows_.data(), rows.size());
    const std::size_t modes = static_cast<std::size_t>(g_.complex_row) * g_.period[1];
    const std::size_t planes = static_cast<std::size_t>(g_.range[2].count);
    buf_ = backend.allocate(2 * modes * planes);
    cp_ = backend.allocate(modes * planes);
    if (g_.z_periodic) q_ = backend.allocate(modes * planes);

    long long n[2] = {g_.period[1], g_.period[0]};
    long long real_embed[2] = {g_.period[1], g_.real_row};
    long long complex_embed[2] = {g_.period[1], g_.complex_row};
    const long long real_dist = static_cast<long long>(g_.period[1]) * g_.real_row;
    const long long complex_dist = static_cast<long long>(g_.period[1]) * g_.complex_row;
    std::size_t work = 0;
    ADI3D_CUFFT_CHECK(cufftCreate(&forward_));
    ADI3D_CUFFT_CHECK(cufftMakePlanMany64(forward_, 2, n, real_embed, 1, real_dist, complex_embed, 1, complex_dist,
                                         CufftTypes<T>::forward, static_cast<long long>(planes), &work));
    ADI3D_CUFFT_CHECK(cufftSetStream(forward_, stream_));
    ADI3D_CUFFT_CHECK(cufftCreate(&backward_));
    ADI3D_CUFFT_CHECK(cufftMakePlanMany64(backward_, 2, n, complex_embed, 1, complex_dist, real_embed, 1, real_dist,
                                         CufftTypes<T>::backward, static_cast<long long>(planes), &work));
    ADI3D_CUFFT_CHECK(cufftSetStream(backward_, stream_));
  }
  ~CudaSpectralSolve() override {
    if (forward_) cufftDestroy(forward_);
    if (backward_) cufftDestroy(backward_);
  }
  CudaSpectralSolve(const CudaSpectralSolve&) = delete;
  CudaSpectralSolve& operator=(const CudaSpectralSolve&) = delete;

  void solve(T* r, T* u) override {
    ADI3D_CUDA_CHECK(cudaSetDevice(device_));
    const unsigned planes = grid_dim(g_.range[2].count);
    const dim3 extend_grid((g_.real_row + kThreads - 1) / kThreads, grid_dim(g_.period[1]), planes);
    extend_kernel<<<extend_grid, kThreads, 0, stream_>>>(r, buf_.data(), g_);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUFFT_CHECK(CufftTypes<T>::exec_forward(forward_, buf_.data()));
    const std::size_t modes = static_cast<std::size_t>(g_.complex_row) * g_.period[1];
    const unsigned mode_blocks = static_cast<unsigned>((modes + kModeThreads - 1) / kModeThreads);
    z_modes_kernel<<<mode_blocks, kModeThreads, 0, stream_>>>(buf_.data(), cp_.data(), q_.data(), rows_.data(), g_,
                                                               wx_, wy_);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUFFT_CHECK(CufftTypes<T>::exec_backward(backward_, buf_.data()));
    const dim3 add_grid((g_.range[0].count + kThreads - 1) / kThreads, grid_dim(g_.range[1].count), planes);
    add_solution_kernel<<<add_grid, kThreads, 0, stream_>>>(buf_.data(), u, g_, scale_);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

 private:
  cudaStream_t stream_;
  int device_;
  SpectralGeometry g_{};
  double wx_ = 0, wy_ = 0;
  T scale_ = 1;
  Array<T> rows_, buf_, cp_, q_;
  cufftHandle forward_ = 0, backward_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<SpectralSolve<T>> make_cuda_spectral_solve(const OperatorView<T>& op, const SpectralLayers<T>& layers,
                                                           Backend<T>& backend, cudaStream_t stream, int device) {
  return std::make_unique<CudaSpectralSolve<T>>(op, layers, backend, stream, device);
}

template std::unique_ptr<SpectralSolve<float>> make_cuda_spectral_solve(const OperatorView<float>&,
                                                                        const SpectralLayers<float>&, Backend<float>&,
                                                                        cudaStream_t, int);
template std::unique_ptr<SpectralSolve<double>> make_cuda_spectral_solve(const OperatorView<double>&,
                                                                         const SpectralLayers<double>&,
                                                                         Backend<double>&, cudaStream_t, int);

}  // namespace adi3d::cuda
