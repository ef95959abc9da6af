#pragma once
// cuFFT's real transforms overloaded on float/double, and a status check that names the call.
#include <cufft.h>

#include <stdexcept>
#include <string>

namespace adi3d::cuda {

inline void check_cufft(cufftResult status, const char* file, int line, const char* expr) {
  if (status != CUFFT_SUCCESS)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             " failed: cufftResult " + std::to_string(static_cast<int>(status)));
}

template <class T>
struct CufftTypes;
template <>
struct CufftTypes<float> {
  static constexpr cufftType forward = CUFFT_R2C;
  static constexpr cufftType backward = CUFFT_C2R;
  static cufftResult exec_forward(cufftHandle p, float* data) {
    return cufftExecR2C(p, data, reinterpret_cast<cufftComplex*>(data));
  }
  static cufftResult exec_backward(cufftHandle p, float* data) {
    return cufftExecC2R(p, reinterpret_cast<cufftComplex*>(data), data);
  }
};
template <>
struct CufftTypes<double> {
  static constexpr cufftType forward = CUFFT_D2Z;
  static constexpr cufftType backward = CUFFT_Z2D;
  static cufftResult exec_forward(cufftHandle p, double* data) {
    return cufftExecD2Z(p, data, reinterpret_cast<cufftDoubleComplex*>(data));
  }
  static cufftResult exec_backward(cufftHandle p, double* data) {
    return cufftExecZ2D(p, reinterpret_cast<cufftDoubleComplex*>(data), data);
  }
};

}  // namespace adi3d::cuda

#define ADI3D_CUFFT_CHECK(expr) ::adi3d::cuda::check_cufft((expr), __FILE__, __LINE__, #expr)
