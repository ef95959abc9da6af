// adi3d_tile_rows_probe: the y/z tiles' memory traffic without their solves. A block
// reads a tile of L columns by all n rows of a line's axis (rows nx apart for y lines,
// nx ny for z lines) from d, and from alpha too, and writes d + alpha back into d: the
// bytes of a plain alpha-field solve (2 reads and a write, "1.5 copies"), or of a plain
// constant one (d alone, 1 copy). Timed against a device copy in the same run, at the
// same byte count in three shapes whose z planes are 2, 1 and 0.5 MiB apart (double), so
// that the rows' width (64, 128, 256 bytes) and their distance can be told apart.
// A developer's tool (docs/perf/step_experiments_h100.txt, item 18); not installed.
//   adi3d_tile_rows_probe
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/event_timer.cuh"

#include <cstddef>
#include <cstdio>
#include <exception>

using adi3d::cuda::EventTimer;

namespace {

template <class T, int L, bool kAlpha>
__global__ void __launch_bounds__(256) tile_rows(T* d, const T* alpha, int nx, int ny, int n, std::size_t row_stride,
                                                 bool y_lines) {
  constexpr int kRows = 256 / L;  // rows a sweep of the block covers
  constexpr int kInFlight = 128 / sizeof(T);  // 128 bytes of each array in flight per thread
  const int tiles_i = nx / L;
  const int col = threadIdx.x % L, row0 = threadIdx.x / L;
  const int i = (blockIdx.x % tiles_i) * L + col;
  const std::size_t o = blockIdx.x / tiles_i;  // z of a y line, y of a z line
  const std::size_t base = i + (y_lines ? static_cast<std::size_t>(nx) * ny * o : static_cast<std::size_t>(nx) * o) +
                           row0 * row_stride;
  for (int r0 = row0; r0 < n; r0 += kRows * kInFlight) {
    T v[kInFlight], w[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int r = r0 + u * kRows;
      const std::size_t p = base + static_cast<std::size_t>(r - row0) * row_stride;
      v[u] = r < n ? d[p] : T(0);
      w[u] = kAlpha && r < n ? alpha[p] : T(0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int r = r0 + u * kRows;
      if (r < n) d[base + static_cast<std::size_t>(r - row0) * row_stride] = v[u] + w[u];
    }
  }
}

template <class T>
__global__ void fill(T* x, std::size_t count, T offset) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[k] = offset + T(1e-3) * T(k % 1000);
}

// Each timing covers kCalls calls queued back to back (per call), as bench gpu's do.
constexpr int kWarmup = 2, kRepetitions = 15, kCalls = 10;

template <class T, int L, bool kAlpha>
void time_tiles(EventTimer& timer, cudaStream_t stream, T* d, const T* alpha, int nx, int ny, int nz, bool y_lines,
                double copy_ms) {
  const int n = y_lines ? ny : nz;
  const std::size_t stride = y_lines ? static_cast<std::size_t>(nx) : static_cast<std::size_t>(nx) * ny;
  const int blocks = (nx / L) * (y_lines ? nz : ny);
  const double ms = timer.median_ms(
      stream, kWarmup, kRepetitions,
      [&] {
        tile_rows<T, L, kAlpha><<<blocks, 256, 0, stream>>>(d, alpha, nx, ny, n, stride, y_lines);
        ADI3D_CUDA_LAUNCH_CHECK();
      },
      {}, kCalls);
  const double copies = kAlpha ? 1.5 : 1.0;
  std::printf("  %s lines  %3zu-byte rows  %-9s %.3f ms  %5.1f%% of %.1f copies\n", y_lines ? "y" : "z", L * sizeof(T),
              kAlpha ? "d, alpha" : "d", ms, 100.0 * copy_ms * copies / ms, copies);
}

template <class T>
void probe_shape(EventTimer& timer, cudaStream_t stream, int nx, int ny, int nz) {
  const std::size_t count = static_cast<std::size_t>(nx) * ny * nz, bytes = count * sizeof(T);
  T *d = nullptr, *alpha = nullptr, *copy = nullptr;
  ADI3D_CUDA_CHECK(cudaMalloc(&d, bytes));
  ADI3D_CUDA_CHECK(cudaMalloc(&alpha, bytes));
  ADI3D_CUDA_CHECK(cudaMalloc(&copy, bytes));
  fill<<<1024, 256>>>(d, count, T(1));
  ADI3D_CUDA_LAUNCH_CHECK();
  fill<<<1024, 256>>>(alpha, count, T(2));
  ADI3D_CUDA_LAUNCH_CHECK();
  fill<<<1024, 256>>>(copy, count, T(3));
  ADI3D_CUDA_LAUNCH_CHECK();
  ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
  const double copy_ms = timer.median_ms(
      stream, kWarmup, kRepetitions,
      [&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(copy, d, bytes, cudaMemcpyDeviceToDevice, stream)); }, {}, kCalls);
  std::printf("%s %dx%dx%d (z planes %.2f MiB apart): copy %.3f ms (%.0f GB/s)\n", sizeof(T) == 4 ? "float" : "double",
              nx, ny, nz, static_cast<double>(nx) * ny * sizeof(T) / (1 << 20), copy_ms, 2e-6 * bytes / copy_ms);
  for (const bool y_lines : {true, false}) {
    constexpr int kNarrow = 64 / sizeof(T), kWide = 128 / sizeof(T), kWidest = 256 / sizeof(T);
    time_tiles<T, kNarrow, false>(timer, stream, d, alpha, nx, ny, nz, y_lines, copy_ms);
    time_tiles<T, kNarrow, true>(timer, stream, d, alpha, nx, ny, nz, y_lines, copy_ms);
    time_tiles<T, kWide, false>(timer, stream, d, alpha, nx, ny, nz, y_lines, copy_ms);
    time_tiles<T, kWide, true>(timer, stream, d, alpha, nx, ny, nz, y_lines, copy_ms);
    time_tiles<T, kWidest, true>(timer, stream, d, alpha, nx, ny, nz, y_lines, copy_ms);
  }
  ADI3D_CUDA_CHECK(cudaFree(d));
  ADI3D_CUDA_CHECK(cudaFree(alpha));
  ADI3D_CUDA_CHECK(cudaFree(copy));
}

}  // namespace

int main() {
  try {
    EventTimer timer;
    cudaStream_t stream = nullptr;
    ADI3D_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    probe_shape<double>(timer, stream, 512, 512, 512);
    probe_shape<double>(timer, stream, 256, 512, 1024);
    probe_shape<double>(timer, stream, 128, 512, 2048);
    probe_shape<float>(timer, stream, 512, 512, 512);
    probe_shape<float>(timer, stream, 1024, 512, 512);
    ADI3D_CUDA_CHECK(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adi3d_tile_rows_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
