// Built when ADI3D_CUDA=OFF: the CUDA entry points exist and say how to get them.
#include "solvers/backend.hpp"

namespace adi3d {

bool cuda_compiled() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_device_summary() { return "CUDA backend not compiled (configure with -DADI3D_CUDA=ON)"; }

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int) {
  throw BackendUnavailable(
      "the CUDA backend was not compiled into this binary; rebuild with -DADI3D_CUDA=ON");
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int);

}  // namespace adi3d

#include "solvers/cuda/backend/cuda_variants.hpp"

namespace adi3d {

std::size_t cuda_free_bytes(int) { return 0; }

}  // namespace adi3d
