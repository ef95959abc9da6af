// CUDA backend entry points: device discovery.
#include "solvers/backend.hpp"

#include <cuda_runtime.h>

#include <string>

namespace adi3d {

bool cuda_compiled() { return true; }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: clear the sticky error, report none
    return 0;
  }
  return count;
}

std::string cuda_device_summary() {
  const int count = cuda_device_count();
  if (count == 0) return "no CUDA device found";
  std::string out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    out += "device " + std::to_string(d) + ": " + prop.name + " (sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ", " +
           std::to_string(prop.totalGlobalMem >> 20) + " MiB)";
    if (d + 1 < count) out += "; ";
  }
  return out;
}

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int) {
  throw BackendUnavailable("the CUDA backend's operations are not implemented yet");
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int);

}  // namespace adi3d
