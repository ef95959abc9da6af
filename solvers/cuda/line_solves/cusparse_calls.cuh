#pragma once
// The cuSPARSE tridiagonal routines the baselines call, overloaded on float/double so that
// templates can call one name, and a status check that says which call failed.
#include <cusparse.h>

#include <stdexcept>
#include <string>

namespace adi3d::cuda {

inline void check_cusparse(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuSPARSE error in ") + what + ": " + cusparseGetErrorString(status));
}

// gtsv2StridedBatch: `batch` systems of m rows, system s starting at s * stride.
inline cusparseStatus_t gtsv2_strided_buffer(cusparseHandle_t h, int m, const float* a, const float* b,
                                             const float* c, const float* x, int batch, int stride,
                                             std::size_t* bytes) {
  return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, a, b, c, x, batch, stride, bytes);
}
inline cusparseStatus_t gtsv2_strided_buffer(cusparseHandle_t h, int m, const double* a, const double* b,
                                             const double* c, const double* x, int batch, int stride,
                                             std::size_t* bytes) {
  return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, a, b, c, x, batch, stride, bytes);
}
inline cusparseStatus_t gtsv2_strided(cusparseHandle_t h, int m, const float* a, const float* b, const float* c,
                                      float* x, int batch, int stride, void* buffer) {
  return cusparseSgtsv2StridedBatch(h, m, a, b, c, x, batch, stride, buffer);
}
inline cusparseStatus_t gtsv2_strided(cusparseHandle_t h, int m, const double* a, const double* b,
                                      const double* c, double* x, int batch, int stride, void* buffer) {
  return cusparseDgtsv2StridedBatch(h, m, a, b, c, x, batch, stride, buffer);
}

// gtsvInterleavedBatch with algorithm 0 (Thomas): row r of system s at r * batch + s. It
// overwrites a, b and c (at least c: see cusparse_douglas_step.cu).
inline cusparseStatus_t gtsv_interleaved_buffer(cusparseHandle_t h, int m, const float* a, const float* b,
                                                const float* c, const float* x, int batch, std::size_t* bytes) {
  return cusparseSgtsvInterleavedBatch_bufferSizeExt(h, 0, m, a, b, c, x, batch, bytes);
}
inline cusparseStatus_t gtsv_interleaved_buffer(cusparseHandle_t h, int m, const double* a, const double* b,
                                                const double* c, const double* x, int batch,
                                                std::size_t* bytes) {
  return cusparseDgtsvInterleavedBatch_bufferSizeExt(h, 0, m, a, b, c, x, batch, bytes);
}
inline cusparseStatus_t gtsv_interleaved(cusparseHandle_t h, int m, float* a, float* b, float* c, float* x,
                                         int batch, void* buffer) {
  return cusparseSgtsvInterleavedBatch(h, 0, m, a, b, c, x, batch, buffer);
}
inline cusparseStatus_t gtsv_interleaved(cusparseHandle_t h, int m, double* a, double* b, double* c, double* x,
                                         int batch, void* buffer) {
  return cusparseDgtsvInterleavedBatch(h, 0, m, a, b, c, x, batch, buffer);
}

// gtsv2_nopivot: one system of m rows (or batch systems of ldb apart) without pivoting.
inline cusparseStatus_t gtsv2_nopivot_buffer(cusparseHandle_t h, int m, int n, const float* a, const float* b,
                                             const float* c, const float* x, int ldb, std::size_t* bytes) {
  return cusparseSgtsv2_nopivot_bufferSizeExt(h, m, n, a, b, c, x, ldb, bytes);
}
inline cusparseStatus_t gtsv2_nopivot_buffer(cusparseHandle_t h, int m, int n, const double* a, const double* b,
                                             const double* c, const double* x, int ldb, std::size_t* bytes) {
  return cusparseDgtsv2_nopivot_bufferSizeExt(h, m, n, a, b, c, x, ldb, bytes);
}
inline cusparseStatus_t gtsv2_nopivot(cusparseHandle_t h, int m, int n, const float* a, const float* b,
                                      const float* c, float* x, int ldb, void* buffer) {
  return cusparseSgtsv2_nopivot(h, m, n, a, b, c, x, ldb, buffer);
}
inline cusparseStatus_t gtsv2_nopivot(cusparseHandle_t h, int m, int n, const double* a, const double* b,
                                      const double* c, double* x, int ldb, void* buffer) {
  return cusparseDgtsv2_nopivot(h, m, n, a, b, c, x, ldb, buffer);
}

}  // namespace adi3d::cuda
