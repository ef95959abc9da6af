// Element-wise kernels: fill (1 write per point), y += a x (2 reads + 1 write per point),
// x *= s and the layer scaling s = sqrt(layer / alpha) (2 arrays per point),
// y = a x + b y across precisions (mixed-precision Poisson; 1 read + 1 write per point
// with b = 0, 2 reads + 1 write else, of 4 and 8 bytes),
// the partition method's coupling terms x += y + v a + w b with planes a and b broadcast
// along z (coupling_terms.hpp; 2 arrays per point, 3 with y, v and w per node 2 more),
// writing one face plane from face-layout values (1 read + 1 write per face node), and
// the tangential factors of face arrays (moving Dirichlet data, douglas_step.hpp).
// Grid-stride loops: a fixed, device-filling grid serves any n.
#include "solvers/boundary.hpp"
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/discretization.hpp"
#include "solvers/distributed/coupling_terms.hpp"
#include "solvers/face_layout.hpp"

#include <algorithm>

namespace adi3d::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t n) {
  // 65535 blocks of 256 threads cover 16M elements per sweep; loops cover the rest.
  return static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535));
}

template <class T>
__global__ void fill_kernel(T* __restrict__ x, T value, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    x[e] = value;
}

template <class T>
__global__ void add_constant_kernel(T* __restrict__ x, double value, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    x[e] = static_cast<T>(x[e] + value);
}

template <class T>
__global__ void axpy_kernel(T a, const T* __restrict__ x, T* __restrict__ y, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    y[e] += a * x[e];
}

template <class T>
__global__ void multiply_kernel(const T* __restrict__ s, T* __restrict__ x, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    x[e] *= s[e];
}

template <class T>
__global__ void layer_scaling_kernel(const T* __restrict__ alpha, const T* __restrict__ layer, std::size_t plane,
                                     T* __restrict__ s, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    s[e] = sqrt(layer[e / plane] / alpha[e]);
}

// In double whichever way the conversion goes: the double side keeps its digits.
template <class T, class U>
__global__ void axpby_converted_kernel(double a, const U* __restrict__ x, double b, T* __restrict__ y, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    y[e] = static_cast<T>(b == 0 ? a * static_cast<double>(x[e])
                                 : a * static_cast<double>(x[e]) + b * static_cast<double>(y[e]));
}

template <class T>
__global__ void add_coupling_terms_kernel(const T* __restrict__ y, const T* __restrict__ v, const T* __restrict__ a,
                                          const T* __restrict__ w, const T* __restrict__ b, bool per_node,
                                          T* __restrict__ x, std::size_t plane, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    x[e] += coupling_term(y, v, a, w, b, e, per_node ? e : e / plane, e % plane);
}

// visit(e, p) for face element e = a + nu b of face `face` (face_layout.hpp) and its grid
// node p, grid-stride.
template <class Visit>
__device__ void for_each_face_node(int nx, int ny, int nz, int face, Visit visit) {
  const int n[3] = {nx, ny, nz};
  const FaceAxes fa = face_axes(face);
  const int nu = n[fa.u];
  const std::size_t count = static_cast<std::size_t>(nu) * n[fa.v];
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x)
    visit(e, face_node(n, face, static_cast<int>(e % nu), static_cast<int>(e / nu)));
}

template <class T>
__global__ void set_face_kernel(int nx, int ny, int nz, int face, const T* __restrict__ values,
                                T* __restrict__ field) {
  for_each_face_node(nx, ny, nz, face, [&](std::size_t e, std::size_t p) { field[p] = values[e]; });
}

// field *= factor on the nodes of face `face`.
template <class T>
__global__ void scale_face_kernel(int nx, int ny, int nz, int face, T factor, T* __restrict__ field) {
  for_each_face_node(nx, ny, nz, face, [&](std::size_t, std::size_t p) { field[p] *= factor; });
}

template <class T>
__global__ void face_tangential_factor_kernel(OperatorView<T> op, int face, int axis, T tau,
                                              const T* __restrict__ in, T* __restrict__ out) {
  const FaceAxes fa = face_axes(face);
  const int nu = op.n[fa.u];
  const std::size_t count = static_cast<std::size_t>(nu) * op.n[fa.v];
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x)
    out[e] = tangential_factor(op, face, axis, tau, in, static_cast<int>(e % nu),
                               static_cast<int>(e / nu));
}

template <class T>
__global__ void robin_data_kernel(OperatorView<T> op, int face, const T* __restrict__ u_inf, const T* __restrict__ u,
                                  T* __restrict__ g) {
  const FaceAxes fa = face_axes(face);
  const int nu = op.n[fa.u];
  const std::size_t count = static_cast<std::size_t>(nu) * op.n[fa.v];
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x)
    g[e] = robin_derivative(op, face, u_inf, u, static_cast<int>(e % nu), static_cast<int>(e / nu));
}

// out[i] = the sum over b of in[b n + i], b = 0..blocks-1 in order (deterministic).
template <class T>
__global__ void sum_blocks_kernel(const T* __restrict__ in, int blocks, std::size_t n, T* __restrict__ out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    T sum = in[i];
    for (int b = 1; b < blocks; ++b) sum += in[b * n + i];
    out[i] = sum;
  }
}

}  // namespace

template <class T>
void launch_sum_blocks(const T* in, int blocks, std::size_t n, T* out, cudaStream_t s) {
  if (n == 0) return;
  sum_blocks_kernel<<<grid_for(n), kThreads, 0, s>>>(in, blocks, n, out);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_fill(T* x, T value, std::size_t n, cudaStream_t s) {
  fill_kernel<<<grid_for(n), kThreads, 0, s>>>(x, value, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_add_constant(T* x, double value, std::size_t n, cudaStream_t s) {
  add_constant_kernel<<<grid_for(n), kThreads, 0, s>>>(x, value, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_multiply(const T* scale, T* x, std::size_t n, cudaStream_t s) {
  multiply_kernel<<<grid_for(n), kThreads, 0, s>>>(scale, x, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_layer_scaling(const T* alpha, const T* layer, std::size_t plane, std::size_t planes, T* scale,
                          cudaStream_t s) {
  const std::size_t n = plane * planes;
  layer_scaling_kernel<<<grid_for(n), kThreads, 0, s>>>(alpha, layer, plane, scale, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_axpy(T a, const T* x, T* y, std::size_t n, cudaStream_t s) {
  axpy_kernel<<<grid_for(n), kThreads, 0, s>>>(a, x, y, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n, cudaStream_t s) {
  axpby_converted_kernel<<<grid_for(n), kThreads, 0, s>>>(a, x, b, y, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                               std::size_t plane, std::size_t planes, cudaStream_t s) {
  const std::size_t n = plane * planes;
  add_coupling_terms_kernel<<<grid_for(n), kThreads, 0, s>>>(y, v, a, w, b, per_node, x, plane, n);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_set_face(const Grid3& grid, int face, const T* values, T* field, cudaStream_t s) {
  const std::size_t count = face_size(grid, face);
  if (count == 0) return;
  set_face_kernel<<<grid_for(count), kThreads, 0, s>>>(grid.n[0], grid.n[1], grid.n[2], face,
                                                       values, field);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_scale_face(const Grid3& grid, int face, T factor, T* field, cudaStream_t s) {
  const std::size_t count = face_size(grid, face);
  if (count == 0) return;
  scale_face_kernel<<<grid_for(count), kThreads, 0, s>>>(grid.n[0], grid.n[1], grid.n[2], face, factor, field);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g, cudaStream_t s) {
  const FaceAxes fa = face_axes(face);
  const std::size_t count = static_cast<std::size_t>(op.n[fa.u]) * op.n[fa.v];
  if (count == 0) return;
  robin_data_kernel<<<grid_for(count), kThreads, 0, s>>>(op, face, u_inf, u, g);
  ADI3D_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau,
                                   const T* in, T* out, cudaStream_t s) {
  const FaceAxes fa = face_axes(face);
  const std::size_t count = static_cast<std::size_t>(op.n[fa.u]) * op.n[fa.v];
  if (count == 0) return;
  face_tangential_factor_kernel<<<grid_for(count), kThreads, 0, s>>>(op, face, axis, tau, in, out);
  ADI3D_CUDA_LAUNCH_CHECK();
}

#define ADI3D_INSTANTIATE(T)                                                     \
  template void launch_fill<T>(T*, T, std::size_t, cudaStream_t);                \
  template void launch_add_constant<T>(T*, double, std::size_t, cudaStream_t);   \
  template void launch_axpy<T>(T, const T*, T*, std::size_t, cudaStream_t);      \
  template void launch_multiply<T>(const T*, T*, std::size_t, cudaStream_t);     \
  template void launch_layer_scaling<T>(const T*, const T*, std::size_t, std::size_t, T*, cudaStream_t); \
  template void launch_axpby_converted<T>(double, const OtherPrecision<T>*, double, T*, std::size_t, cudaStream_t); \
  template void launch_sum_blocks<T>(const T*, int, std::size_t, T*, cudaStream_t); \
  template void launch_add_coupling_terms<T>(const T*, const T*, const T*, const T*, const T*, bool, T*, std::size_t, \
                                             std::size_t, cudaStream_t);                                          \
  template void launch_set_face<T>(const Grid3&, int, const T*, T*, cudaStream_t);       \
  template void launch_scale_face<T>(const Grid3&, int, T, T*, cudaStream_t);            \
  template void launch_face_tangential_factor<T>(const OperatorView<T>&, int, int, T, const T*, \
                                                 T*, cudaStream_t);                          \
  template void launch_robin_data<T>(const OperatorView<T>&, int, const T*, const T*, T*, cudaStream_t);
ADI3D_INSTANTIATE(float)
ADI3D_INSTANTIATE(double)
#undef ADI3D_INSTANTIATE

}  // namespace adi3d::cuda
