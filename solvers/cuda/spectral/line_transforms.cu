// The CUDA backend's direct solve where x and y are both sine or cosine axes (Dirichlet or
// Neumann on both faces): each axis's DST-I / DCT-I from the R2C of each line's odd or even
// extension (spectral_lines.hpp), one axis at a time, between compact arrays the size of the
// unknowns.
//
//   r rows -> extend x -> R2C -> modes, transposed -> (kk, kx, j) -> extend y -> R2C -> modes
//   -> (kk, kx, ky) -> Thomas along z for every mode, one thread each -> extend y -> R2C ->
//   modes, transposed -> (kk, j, kx) -> extend x -> R2C -> u += scale e on the nodes.
//
// The transforms are their own inverses, so the way back takes the same forward plans. Bytes
// per unknown point, in values: each extension reads 1 and writes 2, each R2C reads and
// writes 2, each pass after it reads 2 (the complex values, of which it keeps the real or
// the imaginary part) and writes 1; the z solve reads and writes the modes twice and its
// pivots once each way. About 47 with r and u, against about 60 for the extension of whole
// planes (spectral_solve.cu), whose 2D R2C and C2R also take two passes each over 4 values
// a point. Working memory: 4 values a point.
#include "solvers/cuda/spectral/line_transforms.cuh"

#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/spectral/cufft_calls.cuh"
#include "solvers/cuda/spectral/z_systems.cuh"
#include "solvers/spectral_lines.hpp"
#include "solvers/spectral_modes.hpp"

#include <algorithm>
#include <vector>

namespace adi3d::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kModeThreads = 256;
// A line per warp; the passes after the FFT stage their lines' modes in shared memory, at
// most this much a block (more lines a block where they fit: longer transposed runs).
constexpr std::size_t kTileBytes = kLineTransformTileBytes;
constexpr int kMaxLineWarps = 8;

// Where the pass before the FFT reads a line's values: r's rows of the unknown nodes (the
// first pass), or lines stored one after another (every other pass).
template <class T>
struct GridRows {
  const T* r;
  std::size_t nx, nxy;
  int first0, first1, first2, rows;  // rows: unknown rows (y) a plane
  __device__ const T* line(std::size_t l) const {
    const std::size_t kk = l / rows, jj = l % rows;
    return r + first0 + nx * (first1 + jj) + nxy * (first2 + kk);
  }
};
template <class T>
struct PackedLines {
  const T* p;
  int count;
  __device__ const T* line(std::size_t l) const { return p + l * count; }
};

// Where the pass after the FFT puts X_first .. X_first+count-1 of its lines (tile: `count`
// values a line). Each writes along its destination's fastest index.
template <class T>
struct PackedOut {  // line l's values one after another
  T* p;
  __device__ void store(const T* tile, std::size_t line0, int lines, int first, int count) const {
    for (int e = threadIdx.x; e < lines * count; e += blockDim.x) {
      const int w = e / count, i = e % count;
      p[(line0 + w) * count + i] = tile[w * count + i];
    }
  }
};
template <class T>
struct TransposedOut {  // line l = outer * inner_count + inner: value i at (outer count + i) inner_count + inner
  T* p;
  int inner_count;
  __device__ void store(const T* tile, std::size_t line0, int lines, int first, int count) const {
    for (int e = threadIdx.x; e < lines * count; e += blockDim.x) {
      const int w = e % lines, i = e / lines;
      const std::size_t l = line0 + w, outer = l / inner_count, inner = l % inner_count;
      p[(outer * count + i) * inner_count + inner] = tile[w * count + i];
    }
  }
};
template <class T>
struct AddToGrid {  // u += scale X on the unknown nodes of line l = kk rows + jj
  T* u;
  std::size_t nx, nxy;
  int first1, first2, rows;
  T scale;
  __device__ void store(const T* tile, std::size_t line0, int lines, int first, int count) const {
    for (int e = threadIdx.x; e < lines * count; e += blockDim.x) {
      const int w = e / count, i = e % count;
      const std::size_t l = line0 + w, kk = l / rows, jj = l % rows;
      u[first + i + nx * (first1 + jj) + nxy * (first2 + kk)] += scale * tile[w * count + i];
    }
  }
};

// What the passes before and after know of an axis.
struct LineAxis {
  SpectralAxis kind;
  int n;      // nodes; the extension's period is 2 (n - 1)
  int slots;  // line_slots(n - 1): a line's padded length in the FFT's buffer
  int first;  // the unknown nodes (and stored wavenumbers): first .. first + count - 1
  int count;
};

// A warp a line: its extension into the FFT's padded line.
template <class T, class Source>
__global__ void line_extend_kernel(Source source, std::size_t lines, LineAxis axis, T* __restrict__ f) {
  const std::size_t l = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (l >= lines) return;
  const T* a = source.line(l);
  T* e = f + l * axis.slots;
  // The padding after the period is written too: cuFFT's R2C loads whole padded lines.
  const int period = 2 * (axis.n - 1);
  for (int t = lane; t < axis.slots; t += kWarp) {
    const Mirror at = t < period ? mirror(axis.kind, t, axis.n) : Mirror{0, 0};
    const int i = at.node - axis.first;
    e[t] = i >= 0 && i < axis.count ? static_cast<T>(at.sign) * a[i] : T(0);
  }
}

// A warp a line, `blockDim.x / 32` lines a block: the stored wavenumbers' values staged in
// shared memory, then the sink's stores.
template <class T, class Sink>
__global__ void line_modes_kernel(const T* __restrict__ f, std::size_t lines, LineAxis axis, Sink sink) {
  extern __shared__ unsigned char shared_raw[];
  T* tile = reinterpret_cast<T*>(shared_raw);
  const int w = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  const std::size_t line0 = static_cast<std::size_t>(blockIdx.x) * warps, l = line0 + w;
  if (l < lines) {
    const T* e = f + l * axis.slots;
    for (int i = lane; i < axis.count; i += kWarp) {
      const int k = axis.first + i;
      tile[w * axis.count + i] = line_mode_value(axis.kind, e[2 * k], e[2 * k + 1]);
    }
  }
  __syncthreads();
  if (line0 < lines)
    sink.store(tile, line0, lines - line0 < static_cast<std::size_t>(warps) ? static_cast<int>(lines - line0) : warps,
               axis.first, axis.count);
}

// One thread per mode (kx, ky) of the compact layout (kk, kx, ky): its z system.
template <class T>
__global__ void __launch_bounds__(kModeThreads) z_real_modes_kernel(T* __restrict__ z, T* __restrict__ cp,
                                                                    T* __restrict__ q, const T* __restrict__ rows,
                                                                    SpectralGeometry g, double wx, double wy) {
  const std::size_t modes = static_cast<std::size_t>(g.range[0].count) * g.range[1].count;
  const std::size_t m = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= modes) return;
  const int kx = static_cast<int>(m / g.range[1].count) + g.range[0].first;
  const int ky = static_cast<int>(m % g.range[1].count) + g.range[1].first;
  const T sigma = static_cast<T>(spectral_eigenvalue(wx, kx, g.period[0]) + spectral_eigenvalue(wy, ky, g.period[1]));
  solve_z_line<1>(z + m, modes, cp, q, modes, m, rows, g, sigma, g.z_singular && kx == 0 && ky == 0);
}

template <class T>
class CudaLineTransformSolve final : public SpectralSolve<T> {
 public:
  CudaLineTransformSolve(const OperatorView<T>& op, const SpectralLayers<T>& layers, Backend<T>& backend,
                         cudaStream_t stream, int device)
      : stream_(stream), device_(device), z_(op, layers, backend) {
    const SpectralGeometry& g = z_.g;
    for (int a = 0; a < 2; ++a)
      axis_[a] = {g.kind[a], op.n[a], line_slots(op.n[a] - 1), g.range[a].first, g.range[a].count};
    scale_ = static_cast<T>(4.0 / ((op.n[0] - 1.0) * (op.n[1] - 1.0)));

    const std::size_t c0 = axis_[0].count, c1 = axis_[1].count, c2 = g.range[2].count;
    lines_[0] = c1 * c2;  // x lines: a row of each unknown y and z
    lines_[1] = c0 * c2;  // y lines: one per x wavenumber and plane
    f_ = backend.allocate(std::max(lines_[0] * axis_[0].slots, lines_[1] * axis_[1].slots));
    modes_ = backend.allocate(c0 * c1 * c2);
    cp_ = backend.allocate(c0 * c1 * c2);
    if (g.z_periodic) q_ = backend.allocate(c0 * c1 * c2);

    for (int a = 0; a < 2; ++a) {
      long long n[1] = {2 * (axis_[a].n - 1)};
      long long real_embed[1] = {axis_[a].slots};
      long long complex_embed[1] = {axis_[a].slots / 2};
      std::size_t work = 0;
      ADI3D_CUFFT_CHECK(cufftCreate(&plan_[a]));
      ADI3D_CUFFT_CHECK(cufftMakePlanMany64(plan_[a], 1, n, real_embed, 1, axis_[a].slots, complex_embed, 1,
                                           axis_[a].slots / 2, CufftTypes<T>::forward,
                                           static_cast<long long>(lines_[a]), &work));
      ADI3D_CUFFT_CHECK(cufftSetStream(plan_[a], stream_));
      warps_[a] = kMaxLineWarps;
      while (warps_[a] > 1 && tile_bytes(a) > kTileBytes) warps_[a] /= 2;
    }
    allow_tile<PackedOut<T>>();
    allow_tile<TransposedOut<T>>();
    allow_tile<AddToGrid<T>>();
  }
  ~CudaLineTransformSolve() override {
    for (cufftHandle p : plan_)
      if (p) cufftDestroy(p);
  }
  CudaLineTransformSolve(const CudaLineTransformSolve&) = delete;
  CudaLineTransformSolve& operator=(const CudaLineTransformSolve&) = delete;

  void solve(T* r, T* u) override {
    ADI3D_CUDA_CHECK(cudaSetDevice(device_));
    const SpectralGeometry& g = z_.g;
    const int c0 = axis_[0].count, c1 = axis_[1].count;
    const std::size_t nx = static_cast<std::size_t>(g.n[0]), nxy = nx * g.n[1];
    T* modes = modes_.data();
    // Forward: x along r's rows, then y along the x transform's columns.
    transform(0, GridRows<T>{r, nx, nxy, axis_[0].first, axis_[1].first, g.range[2].first, c1},
              TransposedOut<T>{modes, c1});
    transform(1, PackedLines<T>{modes, c1}, PackedOut<T>{modes});
    const std::size_t mode_count = static_cast<std::size_t>(c0) * c1;
    const unsigned blocks = static_cast<unsigned>((mode_count + kModeThreads - 1) / kModeThreads);
    z_real_modes_kernel<<<blocks, kModeThreads, 0, stream_>>>(modes, cp_.data(), q_.data(), z_.rows.data(), g, z_.wx,
                                                              z_.wy);
    ADI3D_CUDA_LAUNCH_CHECK();
    // Back: y along each x wavenumber's modes, then x along the rows, added into u.
    transform(1, PackedLines<T>{modes, c1}, TransposedOut<T>{modes, c0});
    transform(0, PackedLines<T>{modes, c0},
              AddToGrid<T>{u, nx, nxy, g.range[1].first, g.range[2].first, c1, scale_});
  }

 private:
  std::size_t tile_bytes(int a) const { return static_cast<std::size_t>(warps_[a]) * axis_[a].count * sizeof(T); }

  // Lets the pass after the FFT stage more than the default 48 KB a block (the largest tile
  // of the two axes: the attribute is the kernel's, shared by both).
  template <class Sink>
  void allow_tile() {
    ADI3D_CUDA_CHECK(cudaFuncSetAttribute(line_modes_kernel<T, Sink>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(std::max(tile_bytes(0), tile_bytes(1)))));
  }

  // One axis's transform of every line: the extension, the FFT, the stored wavenumbers.
  template <class Source, class Sink>
  void transform(int a, Source source, Sink sink) {
    const LineAxis& axis = axis_[a];
    const std::size_t lines = lines_[a];
    const unsigned extend_blocks = static_cast<unsigned>((lines + kMaxLineWarps - 1) / kMaxLineWarps);
    line_extend_kernel<<<extend_blocks, kMaxLineWarps * kWarp, 0, stream_>>>(source, lines, axis, f_.data());
    ADI3D_CUDA_LAUNCH_CHECK();
    ADI3D_CUFFT_CHECK(CufftTypes<T>::exec_forward(plan_[a], f_.data()));
    const unsigned mode_blocks = static_cast<unsigned>((lines + warps_[a] - 1) / warps_[a]);
    line_modes_kernel<<<mode_blocks, warps_[a] * kWarp, tile_bytes(a), stream_>>>(f_.data(), lines, axis, sink);
    ADI3D_CUDA_LAUNCH_CHECK();
  }

  cudaStream_t stream_;
  int device_;
  DeviceSpectralSystems<T> z_;
  T scale_ = 1;
  LineAxis axis_[2]{};
  std::size_t lines_[2]{};
  int warps_[2]{};
  Array<T> f_, modes_, cp_, q_;
  cufftHandle plan_[2]{};
};

}  // namespace

template <class T>
std::unique_ptr<SpectralSolve<T>> make_cuda_line_transform_solve(const OperatorView<T>& op,
                                                                 const SpectralLayers<T>& layers, Backend<T>& backend,
                                                                 cudaStream_t stream, int device) {
  return std::make_unique<CudaLineTransformSolve<T>>(op, layers, backend, stream, device);
}

template std::unique_ptr<SpectralSolve<float>> make_cuda_line_transform_solve(const OperatorView<float>&,
                                                                              const SpectralLayers<float>&,
                                                                              Backend<float>&, cudaStream_t, int);
template std::unique_ptr<SpectralSolve<double>> make_cuda_line_transform_solve(const OperatorView<double>&,
                                                                               const SpectralLayers<double>&,
                                                                               Backend<double>&, cudaStream_t, int);

}  // namespace adi3d::cuda
