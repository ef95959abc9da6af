// A batch of random, diagonally dominant tridiagonal systems solved with the installed
// adi3d tridiagonal library (find_package(adi3d), target adi3d::tridiag), and every
// solution checked by its residual. The CPU solver always; the CUDA solver as well when the
// library was built with it (adi3d_TRIDIAG_CUDA, see CMakeLists.txt) and a GPU is visible.
//   tridiag_example [n] [count]      exit status 0 when every residual is small
#include "solvers/tridiag/tridiag.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#if ADI3D_EXAMPLE_CUDA
#include <cuda_runtime.h>
#endif

namespace td = adi3d::tridiag;

namespace {

// Coefficients of `count` systems of `n` rows, element i of system s at s*n + i
// (Layout::contiguous): |b| > |a| + |c| on every row, so every system is well conditioned.
struct Systems {
  long n, count;
  std::vector<double> a, b, c, d;
};

Systems random_systems(long n, long count, unsigned seed) {
  Systems s{n, count, {}, {}, {}, {}};
  const std::size_t size = static_cast<std::size_t>(n * count);
  s.a.resize(size);
  s.b.resize(size);
  s.c.resize(size);
  s.d.resize(size);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> off(-1.0, 1.0), rhs(-10.0, 10.0), extra(0.5, 2.0);
  for (std::size_t k = 0; k < size; ++k) {
    s.a[k] = off(gen);
    s.c[k] = off(gen);
    s.b[k] = std::abs(s.a[k]) + std::abs(s.c[k]) + extra(gen);
    s.d[k] = rhs(gen);
  }
  return s;
}

// max over all rows of |A x - d| / max |d|, for the non-cyclic systems (a[0], c[n-1] unused).
double relative_residual(const Systems& s, const std::vector<double>& x) {
  double worst = 0, scale = 0;
  for (long sys = 0; sys < s.count; ++sys) {
    const long o = sys * s.n;
    for (long i = 0; i < s.n; ++i) {
      double r = s.b[o + i] * x[o + i] - s.d[o + i];
      if (i > 0) r += s.a[o + i] * x[o + i - 1];
      if (i + 1 < s.n) r += s.c[o + i] * x[o + i + 1];
      worst = std::max(worst, std::abs(r));
      scale = std::max(scale, std::abs(s.d[o + i]));
    }
  }
  return worst / scale;
}

td::TridiagBatch<double> batch_of(const Systems& s, const double* a, const double* b, const double* c,
                                  double* d) {
  td::TridiagBatch<double> batch;
  batch.a = a;
  batch.b = b;
  batch.c = c;
  batch.d = d;  // right-hand sides in, solutions out
  batch.n = s.n;
  batch.count = s.count;
  batch.layout = td::Layout::contiguous;
  return batch;
}

bool report(const char* what, double residual) {
  const bool ok = residual < 1e-12;
  std::printf("%-5s relative residual %.3e  %s\n", what, residual, ok ? "ok" : "TOO LARGE");
  return ok;
}

#if ADI3D_EXAMPLE_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The same systems on the GPU: device copies of a, b, c, d, the library's policy for this
// device and shape (tuned if `adi3d tune` wrote a tuning file, else a static guess).
double solve_on_gpu(const Systems& s) {
  const std::size_t bytes = s.a.size() * sizeof(double);
  double *a, *b, *c, *d;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  check(cudaMalloc(&d, bytes), "cudaMalloc");
  check(cudaMemcpy(a, s.a.data(), bytes, cudaMemcpyHostToDevice), "copy a");
  check(cudaMemcpy(b, s.b.data(), bytes, cudaMemcpyHostToDevice), "copy b");
  check(cudaMemcpy(c, s.c.data(), bytes, cudaMemcpyHostToDevice), "copy c");
  check(cudaMemcpy(d, s.d.data(), bytes, cudaMemcpyHostToDevice), "copy d");
  const td::TridiagPolicy policy = td::policy_for<double>(s.n, s.count, td::Layout::contiguous);
  td::solve_cuda(batch_of(s, a, b, c, d), policy);  // default stream, asynchronous
  std::vector<double> x(s.d.size());
  check(cudaMemcpy(x.data(), d, bytes, cudaMemcpyDeviceToHost), "copy x");  // waits for the solve
  for (double* p : {a, b, c, d}) cudaFree(p);
  return relative_residual(s, x);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 512;
  const long count = argc > 2 ? std::atol(argv[2]) : 2000;
  if (n < 1 || count < 1) {
    std::fprintf(stderr, "usage: tridiag_example [n >= 1] [count >= 1]\n");
    return 2;
  }
  const Systems s = random_systems(n, count, 2024);
  std::printf("%ld systems of %ld rows (double, contiguous)\n", count, n);

  std::vector<double> x = s.d;  // solved in place
  td::solve_cpu(batch_of(s, s.a.data(), s.b.data(), s.c.data(), x.data()));
  bool ok = report("CPU", relative_residual(s, x));

#if ADI3D_EXAMPLE_CUDA
  if (td::cuda_available()) {
    try {
      ok = report("CUDA", solve_on_gpu(s)) && ok;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "CUDA solve failed: %s\n", e.what());
      ok = false;
    }
  } else {
    std::printf("CUDA  skipped: the library has the CUDA solver but no GPU is visible\n");
  }
#else
  std::printf("CUDA  skipped: %s\n", td::cuda_compiled() ? "this example was built without the CUDA toolkit"
                                                         : "the installed library has no CUDA solver");
#endif
  return ok ? 0 : 1;
}
