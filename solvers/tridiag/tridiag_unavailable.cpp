// Built when ADI3D_CUDA is OFF: the device entry points exist and say which option builds them.
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_bench.hpp"

#include <stdexcept>

namespace adi3d::tridiag {

namespace {
[[noreturn]] void not_compiled() {
  throw std::runtime_error("tridiag: the CUDA solver was not compiled (configure with -DADI3D_CUDA=ON)");
}
}  // namespace

bool cuda_available() { return false; }
bool cuda_compiled() { return false; }

template <class T>
void solve_cuda(const TridiagBatch<T>&, const TridiagPolicy&, void*) {
  not_compiled();
}

template <class T>
TridiagPolicy static_policy(long, long, Layout) {
  return default_policy();
}

template <class T>
TridiagPolicy policy_for(long, long, Layout) {
  return default_policy();
}

template <class T>
TuneResult tune(const std::vector<TuneCase>&, bool) {
  not_compiled();
}

BenchReport run_bench(const BenchConfig&) { not_compiled(); }

void tune_to_file(const std::string&, const std::string&, bool) { not_compiled(); }

ADI3D_TRIDIAG_INSTANTIATE_CUDA(float)
ADI3D_TRIDIAG_INSTANTIATE_CUDA(double)

}  // namespace adi3d::tridiag
