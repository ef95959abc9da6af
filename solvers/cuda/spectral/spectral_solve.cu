// The CUDA backend's direct solve of -A e = r (spectral_solve.hpp) where x or y is periodic
// (the others take line_transforms.cu, a quarter of this one's transform work). cuFFT has no
// DST-I or DCT-I, so each unknown z plane is extended along x and y to its transform's period
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
#include "solvers/cuda/spectral/z_systems.cuh"
#include "solvers/cuda/spectral/line_transforms.cuh"
#include "solvers/env_switch.hpp"
#include "solvers/spectral_modes.hpp"

#include <algorithm>
#include <vector>

namespace adi3d::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kModeThreads = 256;
constexpr int kMaxGridYZ = 65535;

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
      buf[extension_index(g, t, s, kk)] =
          sign == 0 ? T(0) : static_cast<T>(sign) * r[mx.node + nx * my.node + nxy * k];
    }
  }
}

// One thread per complex mode (solve_mode_line): consecutive threads take consecutive
// modes, so each plane's loads and stores coalesce.
template <class T>
__global__ void __launch_bounds__(kModeThreads) z_modes_kernel(T* __restrict__ buf, T* __restrict__ cp,
                                                               T* __restrict__ q, const T* __restrict__ rows,
                                                               SpectralGeometry g, double wx, double wy) {
  const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
  const std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m < modes) solve_mode_line(buf, cp, q, rows, g, wx, wy, m);
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
      u[i + nx * j + nxy * k] += scale * buf[extension_index(g, i, j, kk)];
    }
  }
}

// ADI3D_SPECTRAL_LINES=off takes the extension solve where the line transforms would apply:
// the two compared on one device (adi3d bench poisson), and the extension solve tested there.
bool line_transforms_switched_off() {
  static const bool off = env_switched_off("ADI3D_SPECTRAL_LINES");
  return off;
}

unsigned grid_dim(int n) { return static_cast<unsigned>(std::min(std::max(n, 1), kMaxGridYZ)); }

template <class T>
class CudaSpectralSolve final : public SpectralSolve<T> {
 public:
  CudaSpectralSolve(const OperatorView<T>& op, const SpectralLayers<T>& layers, Backend<T>& backend,
                    cudaStream_t stream, int device)
      : stream_(stream), device_(device), z_(op, layers, backend) {
    const SpectralGeometry& g = z_.g;
    scale_ = static_cast<T>(1.0 / (static_cast<double>(g.period[0]) * g.period[1]));
    const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
    const std::size_t planes = static_cast<std::size_t>(g.range[2].count);
    buf_ = backend.allocate(2 * modes * planes);
    cp_ = backend.allocate(modes * planes);
    if (g.z_periodic) q_ = backend.allocate(modes * planes);

    long long n[2] = {g.period[1], g.period[0]};
    long long real_embed[2] = {g.period[1], g.real_row};
    long long complex_embed[2] = {g.period[1], g.complex_row};
    const long long real_dist = static_cast<long long>(g.period[1]) * g.real_row;
    const long long complex_dist = static_cast<long long>(g.period[1]) * g.complex_row;
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
    const SpectralGeometry& g = z_.g;
    const unsigned planes = grid_dim(g.range[2].count);
    const dim3 extend_grid((g.real_row + kThreads - 1) / kThreads, grid_dim(g.period[1]), planes);
    extend_kernel<<<extend_grid, kThreads, 0, stream_>>>(r, buf_.data(), g);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUFFT_CHECK(CufftTypes<T>::exec_forward(forward_, buf_.data()));
    const std::size_t modes = static_cast<std::size_t>(g.complex_row) * g.period[1];
    const unsigned mode_blocks = static_cast<unsigned>((modes + kModeThreads - 1) / kModeThreads);
    z_modes_kernel<<<mode_blocks, kModeThreads, 0, stream_>>>(buf_.data(), cp_.data(), q_.data(), z_.rows.data(), g,
                                                               z_.wx, z_.wy);
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUFFT_CHECK(CufftTypes<T>::exec_backward(backward_, buf_.data()));
    const dim3 add_grid((g.range[0].count + kThreads - 1) / kThreads, grid_dim(g.range[1].count), planes);
    add_solution_kernel<<<add_grid, kThreads, 0, stream_>>>(buf_.data(), u, g, scale_);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

 private:
  cudaStream_t stream_;
  int device_;
  DeviceSpectralSystems<T> z_;
  T scale_ = 1;
  Array<T> buf_, cp_, q_;
  cufftHandle forward_ = 0, backward_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<SpectralSolve<T>> make_cuda_spectral_solve(const OperatorView<T>& op, const SpectralLayers<T>& layers,
                                                           Backend<T>& backend, cudaStream_t stream, int device) {
  if (line_transforms_apply(op) && !line_transforms_switched_off())
    return make_cuda_line_transform_solve(op, layers, backend, stream, device);
  return std::make_unique<CudaSpectralSolve<T>>(op, layers, backend, stream, device);
}

template std::unique_ptr<SpectralSolve<float>> make_cuda_spectral_solve(const OperatorView<float>&,
                                                                        const SpectralLayers<float>&, Backend<float>&,
                                                                        cudaStream_t, int);
template std::unique_ptr<SpectralSolve<double>> make_cuda_spectral_solve(const OperatorView<double>&,
                                                                         const SpectralLayers<double>&,
                                                                         Backend<double>&, cudaStream_t, int);

}  // namespace adi3d::cuda
