// Built when ADI3D_CUDA=OFF: run-time compiled formulas are never available.
#include "solvers/backend.hpp"
#include "solvers/rtc/device_function.hpp"

namespace adi3d::rtc {

bool available() { return false; }

template <class T>
struct DeviceFunction<T>::Module {};

template <class T>
DeviceFunction<T>::DeviceFunction(const std::string&, int) {
  throw BackendUnavailable("run-time compiled formulas need the CUDA backend (-DADI3D_CUDA=ON)");
}
template <class T>
DeviceFunction<T>::~DeviceFunction() = default;
template <class T>
void DeviceFunction<T>::sample_grid(const Grid3&, double, T*, CUstream_st*) const {}
template <class T>
void DeviceFunction<T>::sample_slab(const SlabDecomposition&, double, T*, CUstream_st*, const T*, bool) const {}
template <class T>
void DeviceFunction<T>::sample_face(const Grid3&, int, double, T*, CUstream_st*) const {}
template <class T>
std::optional<typename DeviceFunction<T>::NonFiniteEntry> DeviceFunction<T>::first_non_finite() const {
  return std::nullopt;
}
template <class T>
std::array<double, 2> DeviceFunction<T>::range() const {
  return {0, 0};
}

template class DeviceFunction<float>;
template class DeviceFunction<double>;

}  // namespace adi3d::rtc
