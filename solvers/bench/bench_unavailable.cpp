// Built when ADI3D_CUDA=OFF: the reference steps of `adi3d bench adi` and the timings of
// `adi3d bench gpu` exist and say that they need the CUDA backend.
#include "solvers/bench/adi_bench.hpp"
#include "solvers/bench/gpu_bench.hpp"

namespace adi3d::cuda {
namespace {

[[noreturn]] void unavailable() {
  throw BackendUnavailable("the ADI benchmark needs the CUDA backend (configure with -DADI3D_CUDA=ON)");
}

}  // namespace

template <class T>
double median_ms(Backend<T>&, int, int, const std::function<void()>&, int) {
  unavailable();
}
template <class T>
double timed_ms(Backend<T>&, const std::function<void()>&) {
  unavailable();
}
template <class T>
void device_copy(Backend<T>&, T*, const T*, std::size_t) {
  unavailable();
}
template <class T>
void fill_random(Backend<T>&, T*, std::size_t, unsigned, double, double) {
  unavailable();
}

template <class T>
struct CusparseDouglasStep<T>::Impl {
  std::vector<std::string> none;
};
template <class T>
CusparseDouglasStep<T>::CusparseDouglasStep(Backend<T>&, const Diffusion<T>&, double, double) {
  unavailable();
}
template <class T>
CusparseDouglasStep<T>::~CusparseDouglasStep() = default;
template <class T>
void CusparseDouglasStep<T>::step(T*) {}
template <class T>
int CusparseDouglasStep<T>::stage_count() {
  return 0;
}
template <class T>
const char* CusparseDouglasStep<T>::stage_name(int) {
  return "";
}
template <class T>
void CusparseDouglasStep<T>::run_stage(int, T*) {}
template <class T>
void CusparseDouglasStep<T>::solve_y_per_plane(T*) {}
template <class T>
const std::vector<std::string>& CusparseDouglasStep<T>::rebuilt_each_step() const {
  return impl_->none;
}
template <class T>
std::size_t CusparseDouglasStep<T>::device_bytes() const {
  return 0;
}
template <class T>
std::size_t CusparseDouglasStep<T>::estimate_bytes(const Grid3& grid) {
  return 13 * grid.size() * sizeof(T);
}

template <class T>
FtcsStep<T>::FtcsStep(Backend<T>& backend, const Diffusion<T>& d, double dt)
    : backend_(backend), grid_(d.grid), weight_{}, dt_(static_cast<T>(dt)) {
  unavailable();
}
template <class T>
void FtcsStep<T>::step(const T*, T*) {}
#define ADI3D_INSTANTIATE(T)                                                              \
  template double median_ms<T>(Backend<T>&, int, int, const std::function<void()>&, int); \
  template double timed_ms<T>(Backend<T>&, const std::function<void()>&);                 \
  template void device_copy<T>(Backend<T>&, T*, const T*, std::size_t);                   \
  template void fill_random<T>(Backend<T>&, T*, std::size_t, unsigned, double, double);   \
  template class CusparseDouglasStep<T>;                                                  \
  template class FtcsStep<T>;
ADI3D_INSTANTIATE(float)
ADI3D_INSTANTIATE(double)
#undef ADI3D_INSTANTIATE

template <class T>
std::vector<OpTiming> time_backend_ops(int, int) {
  throw BackendUnavailable("GPU benchmarks need the CUDA backend (-DADI3D_CUDA=ON)");
}
template std::vector<OpTiming> time_backend_ops<float>(int, int);
template std::vector<OpTiming> time_backend_ops<double>(int, int);

bool bulk_store_round_trip(int) { throw BackendUnavailable("the bulk-copy probe needs the CUDA backend (-DADI3D_CUDA=ON)"); }

}  // namespace adi3d::cuda
