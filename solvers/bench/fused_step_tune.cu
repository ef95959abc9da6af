// adi3d_fused_tune: times each pass of the fused Douglas step (fused_step_kernels.cuh)
// in several shapes against a device copy, and the whole step through FusedDouglasStep,
// with constant alpha and with a random alpha field (fused_step_var_kernels.cuh).
// A developer's tool for choosing the constants of fused_step.cu; not installed.
//   adi3d_fused_tune [--steps | --passes] [n ...]    (default 512; float and double;
//   --steps: only the whole steps and the variable-alpha passes; --passes: the default
//   constant passes and a few shapes of theirs, then the constant steps)
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/event_timer.cuh"
#include "solvers/cuda/fused_step/fused_pass_factors.hpp"
#include "solvers/cuda/fused_step/fused_step.hpp"
#include "solvers/cuda/fused_step/fused_step_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_var.hpp"
#include "solvers/cuda/fused_step/fused_step_var_kernels.cuh"
#include "solvers/cuda/fused_step/fused_step_xy_kernel.cuh"
#include "solvers/diffusion.hpp"
#include "solvers/material_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace adi3d;
using namespace adi3d::cuda;

namespace {

// Median of `reps` timings on the default stream after two warm-up calls; calls: per
// timing, queued back to back (the time is per call).
double median_ms(const std::function<void()>& op, int reps = 15, int calls = 1) {
  const double ms = EventTimer().median_ms(nullptr, 2, reps, op, {}, calls);
  ADI3D_CUDA_CHECK(cudaGetLastError());
  return ms;
}

int resident(const void* kernel, int threads, std::size_t smem) {
  int sms = 0, per = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  ADI3D_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  ADI3D_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, smem));
  return per * sms;
}

// Largest difference relative to the largest |a|, over the nodes off the x faces (rows of
// nx values; the bulk x pass writes zero increments there, the others leave them alone).
template <class T>
double max_diff(const T* a, const T* b, std::size_t n, int nx) {
  std::vector<T> ha(n), hb(n);
  ADI3D_CUDA_CHECK(cudaMemcpy(ha.data(), a, n * sizeof(T), cudaMemcpyDeviceToHost));
  ADI3D_CUDA_CHECK(cudaMemcpy(hb.data(), b, n * sizeof(T), cudaMemcpyDeviceToHost));
  double m = 0, s = 0;
  for (std::size_t e = 0; e < n; ++e) {
    if (e % nx == 0 || e % nx == static_cast<std::size_t>(nx - 1)) continue;
    m = std::max(m, std::fabs(double(ha[e]) - double(hb[e])));
    s = std::max(s, std::fabs(double(ha[e])));
  }
  return m / std::max(s, 1e-300);
}

// bulk: x_pass_bulk_kernel (one more warp per block), else x_pass_kernel.
template <class T, int L, int NS, bool kBulk = false>
void time_x(fused::PassArgs<T> a, double copy_ms, const char* name, T* ref, bool profile = false) {
  constexpr int C = 17;
  auto kernel = kBulk ? fused::x_pass_bulk_kernel<T, L, NS, C, false> : fused::x_pass_kernel<T, L, NS, C, false>;
  const std::size_t smem =
      kBulk ? fused::x_pass_bulk_smem_bytes<T, L, NS, C>(a.n[0]) : fused::x_pass_smem_bytes<T, L, NS, C>(a.n[0]);
  const int threads = 32 * (L + (kBulk ? 1 : 0));
  int optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  if (smem > static_cast<std::size_t>(optin)) return;
  const int res = resident(reinterpret_cast<const void*>(kernel), threads, smem);
  const int tiles = (a.n[1] - 2 + L - 1) / L, planes = a.n[2] - 2;
  const int split = std::max(1, std::min(planes, res / tiles));
  a.kseg = (planes + split - 1) / split;
  const dim3 grid(tiles, (planes + a.kseg - 1) / a.kseg);
  if (profile) {
    kernel<<<grid, threads, smem>>>(a);
    ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  const double ms = median_ms([&] { kernel<<<grid, threads, smem>>>(a); });
  const std::size_t pts = std::size_t(a.n[0]) * a.n[1] * a.n[2];
  std::printf("  x %-14s %7.3f ms  %5.1f%% of 1 copy  smem %6zu  resident %4d grid %dx%d  diff %.1e\n", name, ms,
              100 * copy_ms / ms, smem, res, grid.x, grid.y, ref ? max_diff(ref, a.d, pts, a.n[0]) : 0.0);
}

// K: lines a warp solves at once; B: loads of u in flight in the z pass's update.
template <class T, int L, int kAxis, int NB = 1, int kThreads = 256, int K = 1, int B = 8>
void time_yz(fused::PassArgs<T> a, double copy_ms, bool profile) {
  constexpr int C = 17;
  auto kernel = fused::yz_pass_kernel<T, L, C, kAxis, false, NB, kThreads, K, B>;
  const std::size_t smem = fused::yz_pass_smem_bytes<T, L, C, NB>(a.n[kAxis]);
  int optin = 0;
  ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  if (smem > static_cast<std::size_t>(optin)) return;
  const int res = resident(reinterpret_cast<const void*>(kernel), kThreads, smem);
  const int tiles = (a.n[0] + L - 1) / L * ((kAxis == 1 ? a.n[2] : a.n[1]) - 2);
  const int grid = std::min(tiles, res);
  if (profile) {
    kernel<<<grid, kThreads, smem>>>(a);
    ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  const double ms = median_ms([&] { kernel<<<grid, kThreads, smem>>>(a); });
  std::printf("  %c %3dB rows%s%s%s%s B=%d %7.3f ms  %5.1f%% of %s copies  smem %6zu  resident %4d\n",
              kAxis == 1 ? 'y' : 'z', L * int(sizeof(T)), NB == 2 ? " 2 tiles" : "", kThreads == 512 ? " 16 warps" : "",
              kThreads == 1024 ? " 32 warps" : "", K == 2 ? " 2 lines at once" : "", B, ms,
              100 * copy_ms * (kAxis == 1 ? 1.0 : 1.5) / ms, kAxis == 1 ? "1" : "1.5", smem, res);
}

// The merged x and y kernel (fused_step_xy_kernel.cuh) with the planes in `ranges`
// ranges (one x block per x tile and range), against the separate passes' sum; then one
// traced run: when the x role's blocks end, when the y role's blocks end and how long
// they waited for planes (microseconds from the first block's start).
template <class T, int kLag = 2>
void time_xy(fused::PassArgs<T> a, double copy_ms, int ranges, bool profile = false) {
  constexpr int C = 17;
  constexpr int L = fused::kXYLines<T>;
  auto kernel = fused::xy_pass_kernel<T, C, false, kLag>;
  const std::size_t smem = fused::xy_pass_smem_bytes<T, C>(a.n[0], a.n[1]);
  const int threads = 32 * (L + 1);
  const int grid = resident(reinterpret_cast<const void*>(kernel), threads, smem);
  const int planes = a.n[2] - 2;
  fused::XYArgs<T> xa{};
  xa.x = a;
  const fused::XYRanges split = fused::xy_ranges(planes, ranges);
  xa.x.kseg = split.kseg;
  xa.partitions = split.count;
  xa.y_factors = a.chunk_factors;
  xa.y_s = a.s;
  const std::size_t words = fused::xy_sync_words(a.n[2]);
  ADI3D_CUDA_CHECK(cudaMalloc(&xa.sync, words * sizeof(unsigned)));
  auto launch = [&] {
    ADI3D_CUDA_CHECK(cudaMemsetAsync(xa.sync, 0, words * sizeof(unsigned)));
    kernel<<<grid, threads, smem>>>(xa);
  };
  if (profile) {
    launch();
    ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
    ADI3D_CUDA_CHECK(cudaFree(xa.sync));
    return;
  }
  const double ms = median_ms(launch);
  std::vector<unsigned long long> trace(static_cast<std::size_t>(grid) * fused::kXYTraceWords);
  ADI3D_CUDA_CHECK(cudaMalloc(&xa.trace, trace.size() * sizeof(unsigned long long)));
  launch();
  ADI3D_CUDA_CHECK(cudaMemcpy(trace.data(), xa.trace, trace.size() * sizeof(unsigned long long),
                              cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < grid; ++b) t0 = std::min(t0, trace[b * fused::kXYTraceWords]);
  std::vector<double> x_end, end, waited, tiles;
  for (int b = 0; b < grid; ++b) {
    const unsigned long long* t = &trace[b * fused::kXYTraceWords];
    if (t[1]) x_end.push_back((t[1] - t0) * 1e-3);
    end.push_back((t[2] - t0) * 1e-3);
    waited.push_back(t[4] * 1e-3);
    tiles.push_back(double(t[3]));
  }
  auto stats = [](std::vector<double> v) {
    if (v.empty()) return std::string("-");
    std::sort(v.begin(), v.end());
    char b[96];
    std::snprintf(b, sizeof b, "%.0f/%.0f/%.0f", v.front(), v[v.size() / 2], v.back());
    return std::string(b);
  };
  std::printf("  xy lag %d ranges %d: %7.3f ms (%5.1f%% of 1 copy)  grid %d, %zu x blocks; min/median/max us: x end %s, "
              "end %s, y wait %s, y tiles %s\n",
              kLag, xa.partitions, ms, 100 * copy_ms / ms, grid, x_end.size(), stats(x_end).c_str(), stats(end).c_str(),
              stats(waited).c_str(), stats(tiles).c_str());
  ADI3D_CUDA_CHECK(cudaFree(xa.trace));
  ADI3D_CUDA_CHECK(cudaFree(xa.sync));
}

// The variable-alpha y and z passes (C = 17: 512-node lines) with one tile buffer and with
// two (fused_step_var.cu's choice), the second checked against the first on the same data
// (the passes work in place: d and u are restored before each check).
template <class T>
void time_var_passes(const fused::VarPassArgs<T>& a, double copy_ms) {
  constexpr int C = 17;
  constexpr int L = fused::kVarYZLines<T>;
  const int n = a.n[0];
  if (fused::chunk_cap(n) != C) {
    std::printf("  var passes: timed for lines of 291-546 nodes only\n");
    return;
  }
  const std::size_t pts = std::size_t(n) * n * n, bytes = pts * sizeof(T);
  T *d0, *u0, *dref, *uref;
  for (T** p : {&d0, &u0, &dref, &uref}) ADI3D_CUDA_CHECK(cudaMalloc(p, bytes));
  ADI3D_CUDA_CHECK(cudaMemcpy(d0, a.d, bytes, cudaMemcpyDeviceToDevice));
  ADI3D_CUDA_CHECK(cudaMemcpy(u0, a.u, bytes, cudaMemcpyDeviceToDevice));
  auto restore = [&] {
    ADI3D_CUDA_CHECK(cudaMemcpy(a.d, d0, bytes, cudaMemcpyDeviceToDevice));
    ADI3D_CUDA_CHECK(cudaMemcpy(a.u, u0, bytes, cudaMemcpyDeviceToDevice));
  };
  auto yz = [&](auto kernel, int axis, int nb, int warps, std::size_t smem, bool reference, const char* what = "",
                int lines = fused::kVarYZLines<T>) {
    int optin = 0;
    ADI3D_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    if (smem > static_cast<std::size_t>(optin)) return;
    const int threads = 32 * warps;
    const int res = resident(reinterpret_cast<const void*>(kernel), threads, smem);
    const int grid = std::min((n + lines - 1) / lines * (n - 2), res);
    restore();
    kernel<<<grid, threads, smem>>>(a);
    ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
    double diff = 0;
    T* out = axis == 1 ? a.d : a.u;
    if (reference)
      ADI3D_CUDA_CHECK(cudaMemcpy(axis == 1 ? dref : uref, out, bytes, cudaMemcpyDeviceToDevice));
    else
      diff = max_diff(axis == 1 ? dref : uref, out, pts, n);
    const double ms = median_ms([&] { kernel<<<grid, threads, smem>>>(a); });
    std::printf("  var %c %d tile%s %2d warps %7.3f ms  %5.1f%% of %.1f copies  smem %6zu resident %4d  diff %.1e%s\n",
                axis == 1 ? 'y' : 'z', nb, nb == 2 ? "s" : " ", warps, ms, 100 * copy_ms * (axis == 1 ? 1.5 : 2.0) / ms,
                axis == 1 ? 1.5 : 2.0, smem, res, diff, what);
  };
  constexpr int W = fused::kVarTwoTileWarps<T>;
  for (int axis = 1; axis <= 2; ++axis) {
    yz(axis == 1 ? fused::yz_var_kernel<T, L, C, 1> : fused::yz_var_kernel<T, L, C, 2>, axis, 1, 8,
       fused::yz_var_smem_bytes<T, L, C>(n), true);
    yz(axis == 1 ? fused::yz_var_kernel<T, L, C, 1, false, 2, W> : fused::yz_var_kernel<T, L, C, 2, false, 2, W>, axis,
       2, W, fused::yz_var_smem_bytes<T, L, C, false, 2>(n), false);
    // 128-byte rows: two data buffers and one alpha tile (var_tile_launch's choice).
    constexpr int L2 = fused::kYZLines<T>;
    yz(axis == 1 ? fused::yz_var_kernel<T, L2, C, 1, false, 2, W, false, true>
                 : fused::yz_var_kernel<T, L2, C, 2, false, 2, W, false, true>,
       axis, 2, W, fused::yz_var_smem_bytes<T, L2, C, false, 2, false, true>(n), false, " shared alpha tile, 128-byte rows",
       L2);
    if (!a.material) continue;
    // Material tiles (a.material: the same field by index); % of the alpha tiles' copies.
    yz(axis == 1 ? fused::yz_var_kernel<T, L, C, 1, false, 1, 8, true> : fused::yz_var_kernel<T, L, C, 2, false, 1, 8, true>,
       axis, 1, 8, fused::yz_var_smem_bytes<T, L, C, false, 1, true>(n), false, " material");
    yz(axis == 1 ? fused::yz_var_kernel<T, L, C, 1, false, 2, W, true>
                 : fused::yz_var_kernel<T, L, C, 2, false, 2, W, true>,
       axis, 2, W, fused::yz_var_smem_bytes<T, L, C, false, 2, true>(n), false, " material");
    // Material tiles of 128-byte rows (the tiles of bytes leave the room).
    yz(axis == 1 ? fused::yz_var_kernel<T, L2, C, 1, false, 1, 8, true> : fused::yz_var_kernel<T, L2, C, 2, false, 1, 8, true>,
       axis, 1, 8, fused::yz_var_smem_bytes<T, L2, C, false, 1, true>(n), false, " material, 128-byte rows", L2);
    yz(axis == 1 ? fused::yz_var_kernel<T, L2, C, 1, false, 2, W, true>
                 : fused::yz_var_kernel<T, L2, C, 2, false, 2, W, true>,
       axis, 2, W, fused::yz_var_smem_bytes<T, L2, C, false, 2, true>(n), false, " material, 128-byte rows", L2);
    // One buffer in blocks of 4 warps (two blocks an SM, one's copies beside the other's solve).
    yz(axis == 1 ? fused::yz_var_kernel<T, L2, C, 1, false, 1, 4, true> : fused::yz_var_kernel<T, L2, C, 2, false, 1, 4, true>,
       axis, 1, 4, fused::yz_var_smem_bytes<T, L2, C, false, 1, true>(n), false, " material, 128-byte rows", L2);
  }
  // Plain solves (the line solve's kernels, kSolveOnly) over the interior: 64-byte rows and
  // two tile buffers, and 128-byte rows with a shared alpha tile.
  fused::VarSolveArgs<T> sa{};
  static_cast<fused::VarPassArgs<T>&>(sa) = a;
  for (int ax = 0; ax < 3; ++ax) {
    sa.first[ax] = 1;
    sa.last[ax] = n - 2;
  }
  auto solve_only = [&](auto kernel, int axis, int warps, std::size_t smem, int lines, const char* what) {
    const int grid =
        std::min((n + lines - 1) / lines * (n - 2), resident(reinterpret_cast<const void*>(kernel), 32 * warps, smem));
    restore();
    const double ms = median_ms([&] { kernel<<<grid, 32 * warps, smem>>>(sa); });
    std::printf("  var %c solve only, %s %7.3f ms  %5.1f%% of 1.5 copies\n", axis == 1 ? 'y' : 'z', what, ms,
                100 * copy_ms * 1.5 / ms);
  };
  {
    constexpr int W = fused::kVarTwoTileWarps<T>, L2 = fused::kYZLines<T>;
    for (int axis = 1; axis <= 2; ++axis) {
      solve_only(axis == 1 ? fused::yz_var_kernel<T, L, C, 1, true, 2, W> : fused::yz_var_kernel<T, L, C, 2, true, 2, W>,
                 axis, W, fused::yz_var_smem_bytes<T, L, C, true, 2>(n), L, "2 tiles, 64-byte rows");
      solve_only(axis == 1 ? fused::yz_var_kernel<T, L2, C, 1, true, 2, W, false, true>
                           : fused::yz_var_kernel<T, L2, C, 2, true, 2, W, false, true>,
                 axis, W, fused::yz_var_smem_bytes<T, L2, C, true, 2, false, true>(n), L2, "shared alpha, 128-byte rows");
    }
  }
  restore();
  for (T* p : {d0, u0, dref, uref}) ADI3D_CUDA_CHECK(cudaFree(p));
}

template <class T>
void run(int n, bool profile, bool steps_only, bool passes_only) {
  const std::size_t pts = std::size_t(n) * n * n;
  std::printf("%s %d^3\n", sizeof(T) == 4 ? "float" : "double", n);
  std::vector<T> h(pts);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  for (T& v : h) v = static_cast<T>(dist(rng));
  T *u, *d, *d2, *cp;
  ADI3D_CUDA_CHECK(cudaMalloc(&u, pts * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMalloc(&d, pts * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMalloc(&d2, pts * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMalloc(&cp, pts * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMemcpy(u, h.data(), pts * sizeof(T), cudaMemcpyHostToDevice));
  ADI3D_CUDA_CHECK(cudaMemcpy(d, h.data(), pts * sizeof(T), cudaMemcpyHostToDevice));
  const double copy_ms = median_ms([&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(cp, u, pts * sizeof(T), cudaMemcpyDeviceToDevice)); });
  std::printf("  copy %.3f ms (%.0f GB/s)\n", copy_ms, 2 * pts * sizeof(T) / copy_ms / 1e6);

  // Factors as fused_step.cu makes them: h = 1/(n-1), alpha 1, tau = h/2; C = 17.
  const double hh = 1.0 / (n - 1);
  const T w = static_cast<T>(1.0 / (hh * hh)), tau = static_cast<T>(0.5 * hh);
  constexpr int C = 17;
  std::vector<T> f(3 * n + 3 * 32 * C, T(0));
  T cprev = 0;
  const T ra = -tau * w, rb = T(1) - ra - ra;
  for (int m = 1; m < n - 1; ++m) {
    f[m] = T(1) / (rb - ra * cprev);
    f[n + m] = ra * f[m];
    f[2 * n + m] = ra * f[m];
    cprev = f[2 * n + m];
  }
  T* al = f.data() + 3 * n;
  T* gf = al + 32 * C;
  T* gb = gf + 32 * C;
  for (int r = 0; r < 32 * C; ++r) al[r] = r < n - 2 ? f[r + 1] : T(0);
  for (int p = 0; p < 32; ++p) {
    double g = 1;
    for (int q = 0; q < C; ++q) gf[p * C + q] = static_cast<T>(g *= double(-ra * al[p * C + q]));
    g = 1;
    for (int q = C - 1; q >= 0; --q) gb[p * C + q] = static_cast<T>(g *= double(-ra * al[p * C + q]));
  }
  T* fac;
  ADI3D_CUDA_CHECK(cudaMalloc(&fac, f.size() * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMemcpy(fac, f.data(), f.size() * sizeof(T), cudaMemcpyHostToDevice));
  fused::PassArgs<T> a{};
  for (int ax = 0; ax < 3; ++ax) {
    a.n[ax] = n;
    a.w[ax] = w;
  }
  a.dt = 2 * tau;
  a.u_in = u;
  a.d = d;
  a.u = u;
  a.factors = fac;
  a.chunk_factors = fac + 3 * n;
  a.s = -ra;
  a.vec16 = (n * sizeof(T)) % 16 == 0;

  constexpr int L64 = 64 / sizeof(T);
  if (profile) {
    time_x<T, 8, 4>(a, copy_ms, "L8 NS4", nullptr, true);
    time_x<T, 8, 4, true>(a, copy_ms, "L8 NS4 bulk", nullptr, true);
    time_yz<T, 2 * L64, 1>(a, copy_ms, true);
    time_yz<T, 2 * L64, 2>(a, copy_ms, true);
    time_yz<T, 2 * L64, 1, 2>(a, copy_ms, true);
    if constexpr (sizeof(T) == 4)
      if (fused::chunk_cap(n) == 17)
        for (int ranges : {2, 3}) time_xy<T>(a, copy_ms, ranges, true);
  }
  Diffusion<T> dif;
  for (int ax = 0; ax < 3; ++ax) {
    dif.grid.n[ax] = n;
    dif.grid.h[ax] = hh;
  }
  // Variable alpha: a random field in [0.5, 1.5] (h) binned into 5 materials, and its
  // material index (7 arrays and 3 bytes a node through the step).
  std::vector<T> binned(pts);
  for (std::size_t p = 0; p < pts; ++p) binned[p] = T(0.5) + T(0.25) * static_cast<int>((h[p] - T(0.5)) * 4);
  const MaterialIndex<T> m = index_materials(binned, {n, n, n});
  CudaBackend<T> backend(0);  // owns the index's device memory
  const MaterialArrays<T> materials = upload_materials(backend, m);
  T* alpha;
  ADI3D_CUDA_CHECK(cudaMalloc(&alpha, pts * sizeof(T)));
  ADI3D_CUDA_CHECK(cudaMemcpy(alpha, binned.data(), pts * sizeof(T), cudaMemcpyHostToDevice));
  const OperatorView<T> vop = make_operator_view(dif, alpha);
  OperatorView<T> mop = vop;
  materials.attach(mop);
  auto free_all = [&] {
    for (T* p : {alpha, u, d, d2, cp, fac}) ADI3D_CUDA_CHECK(cudaFree(p));
  };
  if (profile) {  // the constant step's kernels, the material step's, the alpha step's, once
    FusedDouglasStep<T> step;
    step.run(make_operator_view(dif, nullptr), u, nullptr, 2 * tau, tau, d, nullptr);
    step.run(mop, u, nullptr, 2 * tau, tau, d, nullptr);
    step.run(vop, u, nullptr, 2 * tau, tau, d, nullptr);
    backend.solve_lines(vop, 1, tau, d);  // and a plain y solve of the field
    ADI3D_CUDA_CHECK(cudaDeviceSynchronize());
    free_all();
    return;
  }
  if (passes_only) {  // the default constant passes and the shapes closest to them
    time_x<T, 16, 4, true>(a, copy_ms, "L16 NS4 bulk", nullptr);
    time_x<T, 4, 4, true>(a, copy_ms, "L4 NS4 bulk", nullptr);
    if constexpr (sizeof(T) == 4) {  // fused::kTwoTileShape
      time_yz<T, 2 * L64, 1, 2, 512>(a, copy_ms, false);
      time_yz<T, 2 * L64, 1, 2, 512, 2>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2, 2, 512, 2>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2, 2, 512, 2, 16>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2, 2, 512, 2, 32>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2, 2, 512, 1, 16>(a, copy_ms, false);
    } else {  // 256-byte rows; 16 warps in the z pass
      time_yz<T, 4 * L64, 1>(a, copy_ms, false);
      time_yz<T, 4 * L64, 1, 1, 256, 2>(a, copy_ms, false);
      time_yz<T, 4 * L64, 2, 1, 512>(a, copy_ms, false);
      time_yz<T, 4 * L64, 2, 1, 512, 1, 16>(a, copy_ms, false);
      time_yz<T, 4 * L64, 2, 1, 512, 2, 16>(a, copy_ms, false);
      time_yz<T, 2 * L64, 2, 2, 512, 1, 16>(a, copy_ms, false);
    }
  }
  if (!steps_only && !passes_only) {
  time_x<T, 8, 4>(a, copy_ms, "L8 NS4", nullptr);
  ADI3D_CUDA_CHECK(cudaMemcpy(d2, d, pts * sizeof(T), cudaMemcpyDeviceToDevice));
  time_x<T, 8, 4, true>(a, copy_ms, "L8 NS4 bulk", d2);
  time_x<T, 16, 4, true>(a, copy_ms, "L16 NS4 bulk", d2);
  time_x<T, 4, 4, true>(a, copy_ms, "L4 NS4 bulk", d2);
  time_x<T, 4, 4>(a, copy_ms, "L4 NS4", d2);
  time_x<T, 16, 4>(a, copy_ms, "L16 NS4", d2);
  a.vec16 = 0;
  time_x<T, 8, 4>(a, copy_ms, "L8 NS4 4B", d2);
  a.vec16 = (n * sizeof(T)) % 16 == 0;
  time_yz<T, L64, 1>(a, copy_ms, false);
  time_yz<T, 2 * L64, 1>(a, copy_ms, false);
  time_yz<T, L64, 2>(a, copy_ms, false);
  time_yz<T, 2 * L64, 2>(a, copy_ms, false);
  time_yz<T, 2 * L64, 1, 2>(a, copy_ms, false);
  time_yz<T, 4 * L64, 1>(a, copy_ms, false);
  time_yz<T, 4 * L64, 2>(a, copy_ms, false);
  time_yz<T, 2 * L64, 1, 2, 512>(a, copy_ms, false);
  time_yz<T, 2 * L64, 2, 1, 512>(a, copy_ms, false);
  time_yz<T, 2 * L64, 2, 2, 512>(a, copy_ms, false);
  time_yz<T, 4 * L64, 1, 1, 512>(a, copy_ms, false);
  time_yz<T, 4 * L64, 2, 1, 512>(a, copy_ms, false);
  }
  if constexpr (sizeof(T) == 4)
    if (fused::chunk_cap(n) == 17 && !passes_only)
      for (int ranges : {1, 2, 3, 4}) {
        time_xy<T, 1>(a, copy_ms, ranges);
        time_xy<T, 2>(a, copy_ms, ranges);
      }

  // The whole step through the class (its own constants), constant alpha, no source.
  const OperatorView<T> op = make_operator_view(dif, nullptr);
  FusedDouglasStep<T> step;
  step.set_merge_xy(false);
  const double apart_ms = median_ms([&] { step.run(op, u, nullptr, 2 * tau, tau, d, nullptr); });
  std::printf("  step, passes apart %.3f ms = %.2f copies (floor 3.5)\n", apart_ms, apart_ms / copy_ms);
  {
    const double batch_copy =
        median_ms([&] { ADI3D_CUDA_CHECK(cudaMemcpyAsync(cp, u, pts * sizeof(T), cudaMemcpyDeviceToDevice)); }, 15, 10);
    const double batch_step = median_ms([&] { step.run(op, u, nullptr, 2 * tau, tau, d, nullptr); }, 15, 10);
    std::printf("  10 in a row: copy %.3f ms, step %.3f ms = %.2f copies\n", batch_copy, batch_step,
                batch_step / batch_copy);
  }
  step.set_merge_xy(true);
  const double ms = median_ms([&] { step.run(op, u, nullptr, 2 * tau, tau, d, nullptr); });
  std::printf("  step %s %.3f ms = %.2f copies (floor %s)\n", step.last_merged_xy() ? "x+y merged" : "(not merged)",
              ms, ms / copy_ms, step.last_merged_xy() ? "2.5" : "3.5");
  // With a source (the x role reads f too: 6 arrays from DRAM merged, 8 apart).
  ADI3D_CUDA_CHECK(cudaMemcpy(d2, h.data(), pts * sizeof(T), cudaMemcpyHostToDevice));
  for (bool merge : {false, true}) {
    step.set_merge_xy(merge);
    const double sms = median_ms([&] { step.run(op, u, d2, 2 * tau, tau, d, nullptr); });
    std::printf("  step with source, %s %.3f ms = %.2f copies\n", step.last_merged_xy() ? "x+y merged" : "passes apart",
                sms, sms / copy_ms);
  }

  if (passes_only) {
    free_all();
    return;
  }
  // The binned field as alpha, same step, and through its index.
  fused::VarPassArgs<T> va{};
  fused::take_operator(va, mop);
  va.tau = tau;
  va.alpha = alpha;
  va.d = d;
  va.u = u;
  time_var_passes(va, copy_ms);
  const double vms = median_ms([&] { step.run(vop, u, nullptr, 2 * tau, tau, d, nullptr); });
  // Against the default constant step (passes apart; the merged x+y kernel is slower). The
  // floor: 10 arrays with the x pass in one kernel, 13 apart.
  std::printf("  variable-alpha step (alpha) %.3f ms = %.2f copies (floor %.1f); %.2fx the constant step\n", vms,
              vms / copy_ms, step.last_variable_x_pass() ? 5.0 : 6.5, vms / apart_ms);
  {
    const double mms = median_ms([&] { step.run(mop, u, nullptr, 2 * tau, tau, d, nullptr); });
    std::printf("  %d materials by index: step %.3f ms = %.2f copies (floor %.2f); %.2fx the constant step\n",
                m.materials, mms, mms / copy_ms, 3.5 + 1.5 / sizeof(T), mms / apart_ms);
    // Its first two kernels alone (alpha field, then by index).
    for (const OperatorView<T>* o : {&vop, static_cast<const OperatorView<T>*>(&mop)}) {
      const double rhs_ms = median_ms(
          [&] { launch_operator_rhs(CudaPolicy{}.stencil, *o, u, static_cast<const T*>(nullptr), FacePtrs<T>{}, 2 * tau, d, nullptr); });
      const double x_ms = median_ms([&] { launch_tridiag_generated_x(*o, tau, d, nullptr); });
      std::printf("  %s: stencil %.3f ms, x solve %.3f ms\n", o == &vop ? "alpha field" : "material index", rhs_ms, x_ms);
    }
    // The step's one-kernel x pass alone, both ways (alpha: its floor is 1.5 copies).
    for (const OperatorView<T>* o : {&vop, static_cast<const OperatorView<T>*>(&mop)}) {
      int kernels = 0;
      const double fx_ms = median_ms(
          [&] { kernels = fused_variable_x_pass(*o, u, static_cast<const T*>(nullptr), 2 * tau, tau, d, 0, nullptr); });
      std::printf("  %s: x pass of the step (%s) %.3f ms = %.2f copies (floor %.2f)\n",
                  o == &vop ? "alpha field" : "material index",
                  kernels == 1 ? "rhs formed inside" : "stencil and solve apart", fx_ms, fx_ms / copy_ms,
                  o == &vop ? 1.5 : 1.0 + 0.5 / sizeof(T));
    }
  }
  free_all();
}

}  // namespace

int main(int argc, char** argv) {
  // adi3d_fused_tune [--profile] [n ...]: --profile runs each default pass once (float),
  // the merged x and y kernel with 2 and 3 ranges of planes, the constant, material-index
  // and alpha-field steps and a plain y solve of the field once, for ncu.
  std::vector<int> sizes;
  bool profile = false, steps_only = false, passes_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--profile")
      profile = true;
    else if (std::string(argv[i]) == "--steps")
      steps_only = true;
    else if (std::string(argv[i]) == "--passes")
      passes_only = true;
    else
      sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty()) sizes.push_back(512);
  for (int n : sizes) {
    run<float>(n, profile, steps_only, passes_only);
    if (!profile) run<double>(n, profile, steps_only, passes_only);
  }
  return 0;
}
