// Host batched tridiagonal solve. Contiguous systems: one Thomas (or cyclic Thomas) per
// system from solvers/thomas.hpp, OpenMP over systems. Interleaved systems: gathered in
// blocks of kBlock systems so the vectorised block Thomas of solvers/cpu/
// batched_block_solve.hpp runs with unit stride, then scattered back.
#include "solvers/cpu/batched_block_solve.hpp"
#include "solvers/thomas.hpp"
#include "solvers/tridiag/tridiag.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace adi3d::tridiag {

namespace {

constexpr long kBlock = 64;

template <class T>
void check_batch(const TridiagBatch<T>& bt) {
  if (bt.n < 1 || bt.count < 0) throw std::invalid_argument("tridiag: n must be >= 1 and count >= 0");
  if (bt.count > 0 && (!bt.a || !bt.b || !bt.c || !bt.d))
    throw std::invalid_argument("tridiag: null coefficient pointer");
  if (bt.n > 0x7fffffffL) throw std::invalid_argument("tridiag: n above 2^31-1");
}

// A 1x1 cyclic system: a and c both couple x[0] to itself.
template <class T>
T cyclic_single(T a, T b, T c, T d) {
  return d / (a + b + c);
}

template <class T>
void solve_contiguous(const TridiagBatch<T>& bt) {
  const int n = static_cast<int>(bt.n);
#pragma omp parallel
  {
    std::vector<T> scratch(static_cast<std::size_t>(bt.cyclic ? 3 * n : n));
#pragma omp for schedule(static)
    for (long s = 0; s < bt.count; ++s) {
      const std::size_t o = static_cast<std::size_t>(s) * static_cast<std::size_t>(n);
      if (bt.cyclic) {
        if (n == 1) {
          bt.d[o] = cyclic_single(bt.a[o], bt.b[o], bt.c[o], bt.d[o]);
        } else {
          cyclic_thomas_solve(n, bt.a + o, bt.b + o, bt.c + o, bt.d + o, scratch.data(),
                              scratch.data() + n, scratch.data() + 2 * n);
        }
      } else {
        thomas_solve(n, bt.a + o, bt.b + o, bt.c + o, bt.d + o, scratch.data());
      }
    }
  }
}

template <class T>
void solve_interleaved(const TridiagBatch<T>& bt) {
  const int n = static_cast<int>(bt.n);
  const long blocks = (bt.count + kBlock - 1) / kBlock;
  const std::size_t N = static_cast<std::size_t>(bt.count);
#pragma omp parallel
  {
    const std::size_t sz = static_cast<std::size_t>(n) * kBlock;
    std::vector<T> a(sz), b(sz), c(sz), d(sz), cp(sz), z(sz), bb(sz);
#pragma omp for schedule(static)
    for (long blk = 0; blk < blocks; ++blk) {
      const long s0 = blk * kBlock;
      const int B = static_cast<int>(std::min(kBlock, bt.count - s0));
      for (int m = 0; m < n; ++m) {
        const std::size_t g = static_cast<std::size_t>(m) * N + static_cast<std::size_t>(s0);
        const std::size_t r = static_cast<std::size_t>(m) * B;
        for (int q = 0; q < B; ++q) {
          a[r + q] = bt.a[g + q];
          b[r + q] = bt.b[g + q];
          c[r + q] = bt.c[g + q];
          d[r + q] = bt.d[g + q];
        }
      }
      if (!bt.cyclic) {
        cpu::thomas_block(n, B, a.data(), b.data(), c.data(), d.data(), cp.data());
      } else if (n == 1) {
        for (int q = 0; q < B; ++q) d[q] = cyclic_single(a[q], b[q], c[q], d[q]);
      } else {
        cpu::cyclic_thomas_block(n, B, cpu::BlockScratch<T>{a.data(), b.data(), c.data(), d.data(),
                                                          cp.data(), z.data(), bb.data()});
      }
      for (int m = 0; m < n; ++m) {
        const std::size_t g = static_cast<std::size_t>(m) * N + static_cast<std::size_t>(s0);
        const std::size_t r = static_cast<std::size_t>(m) * B;
        for (int q = 0; q < B; ++q) bt.d[g + q] = d[r + q];
      }
    }
  }
}

}  // namespace

template <class T>
void solve_cpu(const TridiagBatch<T>& batch) {
  check_batch(batch);
  if (batch.count == 0) return;
  if (batch.layout == Layout::contiguous || batch.count == 1)
    solve_contiguous(batch);
  else
    solve_interleaved(batch);
}

template void solve_cpu<float>(const TridiagBatch<float>&);
template void solve_cpu<double>(const TridiagBatch<double>&);

const char* base_kernel_name(BaseKernel b) {
  switch (b) {
    case BaseKernel::pcr_thomas: return "pcr_thomas";
    case BaseKernel::thread_thomas: return "thread_thomas";
    case BaseKernel::partition: return "partition";
    case BaseKernel::reg_partition: return "reg_partition";
  }
  return "pcr_thomas";
}

const char* stage1_method_name(Stage1Method m) {
  switch (m) {
    case Stage1Method::partition: return "partition";
    case Stage1Method::pcr: return "pcr";
    case Stage1Method::reg_partition: return "reg_partition";
  }
  return "partition";
}

std::string to_string(const TridiagPolicy& p) {
  std::ostringstream o;
  o << "stage1=" << stage1_method_name(p.stage1)
    << " stage1_min_systems=" << p.stage1_min_systems << " split_chunk=" << p.split_chunk
    << " base_size=" << p.base_size << " pcr_thomas_switch=" << p.pcr_thomas_switch
    << " base=" << base_kernel_name(p.base) << " base_chunk=" << p.base_chunk
    << " block_threads=" << p.block_threads << " interleaved_thread_min=" << p.interleaved_thread_min;
  return o.str();
}

TridiagPolicy default_policy() { return TridiagPolicy{}; }

}  // namespace adi3d::tridiag
