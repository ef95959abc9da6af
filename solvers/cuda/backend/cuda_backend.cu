// CUDA backend entry points: device discovery, the backend object (one device, one
// stream) and the variant setters. Kernels live in the files named after what they do.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/common/async_copy.cuh"
#include "solvers/cuda/spectral/spectral_solve.cuh"
#include "solvers/nan_norms.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>
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

namespace {

// A kernel built like every other, whose attributes say which code of the build a device runs.
__global__ void code_probe_kernel() {}

// The code device d runs (the build's cubin for its architecture family, or one compiled
// from PTX at start), and whether the paths that need Hopper's bulk copies are taken.
std::string device_paths(int d) {
  if (cudaSetDevice(d) != cudaSuccess) {
    (void)cudaGetLastError();
    return "not usable";
  }
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, code_probe_kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return "no code in this build for it (rebuild with its architecture in CMAKE_CUDA_ARCHITECTURES)";
  }
  const bool bulk = cuda::bulk_copies_usable(reinterpret_cast<const void*>(code_probe_kernel), d);
  return "runs sm_" + std::to_string(a.binaryVersion) + " code (PTX " + std::to_string(a.ptxVersion / 10) + "." +
         std::to_string(a.ptxVersion % 10) + "), " +
         (bulk                                   ? "Hopper bulk-copy kernels"
          : cuda::bulk_copies_switched_off() ? "the kernels without bulk copies (ADI3D_BULK_COPIES=off)"
                                             : "the kernels without bulk copies (those need an sm_90 device and code)");
}

}  // namespace

std::string cuda_device_summary() {
  const int count = cuda_device_count();
  if (count == 0) return "no CUDA device found";
  std::string out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    out += "device " + std::to_string(d) + ": " + prop.name + " (sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ", " + std::to_string(prop.totalGlobalMem >> 20) + " MiB): " + device_paths(d);
    if (d + 1 < count) out += "; ";
  }
  return out;
}

namespace cuda {

template <class T>
CudaBackend<T>::CudaBackend(int device) : device_(device) {
  activate();
  cudaDeviceProp prop{};
  ADI3D_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  name_ = std::string("cuda device ") + std::to_string(device_) + " (" + prop.name + ", sm_" +
          std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
          std::to_string(prop.totalGlobalMem >> 20) + " MiB)";
  ADI3D_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // Eight blocks of 256 threads an SM, each thread 4 loads in flight (reductions.cu): two
  // blocks an SM with one load each read 1.4 TB/s on an H200 (0.79 ms for a 513^3 double).
  norm_blocks_ = std::max(1, 8 * prop.multiProcessorCount);
  norm_buf_ = device_allocate<double>(kNormValues * (static_cast<std::size_t>(norm_blocks_) + 1));
  counter_ = device_allocate<unsigned>(1);
  ADI3D_CUDA_CHECK(cudaMemsetAsync(counter_.data(), 0, sizeof(unsigned), stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
CudaBackend<T>::~CudaBackend() {
  // Destructors do not throw: finish queued work, release the stream; Arrays free memory.
  static_cast<void>(cudaSetDevice(device_));
  if (stream_) {
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cudaStreamDestroy(stream_));
  }
}

template <class T>
void CudaBackend<T>::activate() const {
  ADI3D_CUDA_CHECK(cudaSetDevice(device_));
}

template <class T>
std::string CudaBackend<T>::description() const {
  return name_;
}

template <class T>
Array<T> CudaBackend<T>::allocate(std::size_t n) {
  activate();
  return device_allocate<T>(n);
}

template <class T>
void CudaBackend<T>::upload(const T* host, T* dst, std::size_t n) {
  if (n == 0) return;
  activate();
  // Pageable host memory: the copy is staged by the driver; synchronising keeps the
  // caller free to reuse its buffer at once.
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(dst, host, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
Array<std::uint8_t> CudaBackend<T>::upload_bytes(const std::uint8_t* host, std::size_t n) {
  activate();
  Array<std::uint8_t> a = device_allocate<std::uint8_t>(n);
  if (n == 0) return a;
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(a.data(), host, n, cudaMemcpyHostToDevice, stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return a;
}

template <class T>
bool CudaBackend<T>::index_materials(const T* alpha, const std::array<int, 3>& n, int pitch, int max_values,
                                     std::vector<T>& values, Array<std::uint8_t>& index) {
  activate();
  const std::size_t size = static_cast<std::size_t>(n[0]) * n[1] * n[2];
  values = launch_collect_values(alpha, size, max_values + 1, stream_);
  if (static_cast<int>(values.size()) <= max_values) index = launch_material_index(alpha, n, pitch, values, stream_);
  return true;
}

template <class T>
void CudaBackend<T>::download(const T* src, T* host, std::size_t n) {
  if (n == 0) return;
  activate();
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(host, src, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
void CudaBackend<T>::fill(T* x, T value, std::size_t n) {
  if (n == 0) return;
  activate();
  launch_fill(x, value, n, stream_);
}

template <class T>
void CudaBackend<T>::add_constant(T* x, double value, std::size_t n) {
  if (n == 0) return;
  activate();
  launch_add_constant(x, value, n, stream_);
}

template <class T>
void CudaBackend<T>::operator_rhs(const OperatorView<T>& op, const T* u, const T* f,
                                  const FaceData<T>& neumann, T scale, T* r) {
  activate();
  FacePtrs<T> g{};
  for (int i = 0; i < 6; ++i) g.g[i] = neumann[i];
  last_stencil_ = launch_operator_rhs(policy_.stencil, op, u, f, g, scale, r, stream_);
}

template <class T>
void CudaBackend<T>::fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base, T* f) {
  activate();
  FacePtrs<T> g{};
  for (int i = 0; i < 6; ++i) g.g[i] = neumann[i];
  launch_fold_neumann_terms(op, base, g, f, stream_);
}

template <class T>
T* CudaBackend<T>::line_scratch(std::size_t n) {
  if (n == 0) return nullptr;
  if (scratch_.size() < n) {
    // Queued kernels may still read the old scratch: wait before freeing it.
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
    scratch_ = Array<T>();
    scratch_ = device_allocate<T>(n);
  }
  return scratch_.data();
}

template <class T>
T* CudaBackend<T>::constant_factors(const OperatorView<T>& op, int axis, T tau, bool& ready) {
  ConstantFactors& f = factors_[axis];
  const int n = op.n[axis];
  const LineMatrixKey<T> key = line_matrix_key(op, axis);
  ready = f.valid && f.key == key && f.tau == tau;
  if (ready) return f.coef.data();
  if (f.coef.size() < 4 * static_cast<std::size_t>(n)) {
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));  // queued solves may still read it
    f.coef = Array<T>();
    f.coef = device_allocate<T>(4 * static_cast<std::size_t>(n));
  }
  f.valid = true;
  f.key = key;
  f.tau = tau;
  return f.coef.data();
}

template <class T>
T* CudaBackend<T>::x_coefficients(const OperatorView<T>& op, T tau) {
  XCoefficients& x = x_coef_;
  const bool constant = lines_alike(op, 0);
  const LineMatrixKey<T> key = line_matrix_key(op, 0);
  const bool same = x.valid && constant && x.n[0] == op.n[0] && x.n[1] == op.n[1] && x.n[2] == op.n[2] &&
                    x.key == key && x.tau == tau;
  if (same) return x.abc.data();
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
  if (x.abc.size() < 3 * points) {
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));  // queued solves may still read them
    x.abc = Array<T>();
    x.valid = false;
    // The arrays plus the library's cyclic workspace, with 5% of the device left over.
    std::size_t free_bytes = 0, total_bytes = 0;
    ADI3D_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t need = (3 * points + tridiag_arrays_workspace(op)) * sizeof(T) + total_bytes / 20;
    if (need > free_bytes) return nullptr;
    x.abc = device_allocate<T>(3 * points);
  }
  T* a = x.abc.data();
  launch_x_coefficients(op, tau, a, a + points, a + 2 * points, stream_);
  x.valid = constant;
  for (int i = 0; i < 3; ++i) x.n[i] = op.n[i];
  x.key = key;
  x.tau = tau;
  return a;
}

template <class T>
XSolveVariant CudaBackend<T>::launch_x_lines(const OperatorView<T>& op, T tau, T* d) {
  using V = XSolveVariant;
  const V v = policy_.x_solve;
  if (v == V::register_cr && launch_register_cr_x(op, tau, d, stream_)) return V::register_cr;
  // warp_lines takes what it can and hands the rest to tridiag.
  const bool tridiag = v == V::tridiag || v == V::warp_lines;
  if (v == V::warp_lines && warp_lines_.run(op, 0, tau, d, stream_)) return V::warp_lines;
  if (tridiag) {
    if (launch_tridiag_generated_x(op, tau, d, stream_)) return V::tridiag;
    if (const T* abc = x_coefficients(op, tau)) {
      const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
      launch_tridiag_arrays_x(op, abc, abc + points, abc + 2 * points, d, stream_);
      return V::tridiag;
    }
  }
  // Periodic lines of the register-packed variant, and tridiag lines whose coefficient
  // arrays do not fit, go through PCR-Thomas.
  if ((v == V::pcr_thomas || v == V::register_cr || tridiag) && launch_pcr_thomas_x(op, tau, d, stream_))
    return V::pcr_thomas;
  if (v == V::cusparse && launch_cusparse_x(op, tau, d, device_, stream_)) return V::cusparse;
  return V::thread_thomas;  // nothing launched: solve_lines' per-thread Thomas takes them
}

template <class T>
void CudaBackend<T>::solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) {
  activate();
  const std::size_t points = static_cast<std::size_t>(op.n[0]) * op.n[1] * op.n[2];
  if (points == 0) return;
  if (axis == 0) {
    // Robin lines that differ line by line (an h field, or an alpha field, whose
    // generated-row and library kernels build their rows without the Robin diagonal): an
    // alpha field's by a warp per line where it takes them (its rows add the Robin terms),
    // else per-thread Thomas on axis_row's rows. (The y/z tiles decline what they cannot
    // take themselves.)
    const bool robin_lines = robin_axis(op, 0) && !lines_alike(op, 0);
    if (robin_lines)
      last_x_solve_ = op.alpha_field && warp_lines_.run(op, 0, tau, d, stream_) ? XSolveVariant::warp_lines
                                                                                : XSolveVariant::thread_thomas;
    else
      last_x_solve_ = launch_x_lines(op, tau, d);
    if (last_x_solve_ != XSolveVariant::thread_thomas) return;
  } else {
    last_yz_by_warp_ = policy_.yz_tiles && warp_lines_.run(op, axis, tau, d, stream_);
    if (last_yz_by_warp_) return;
  }
  bool ready = false;
  T* scratch = thread_thomas_constant_path(op, axis, policy_)
                   ? constant_factors(op, axis, tau, ready)
                   : line_scratch(thread_thomas_scratch_size(op, axis, policy_));
  launch_thread_thomas(op, axis, tau, d, scratch, policy_, ready, stream_);
}

template <class T>
void CudaBackend<T>::set_face(const Grid3& grid, int face, const T* values, T* field) {
  activate();
  launch_set_face(grid, face, values, field, stream_);
}

template <class T>
void CudaBackend<T>::scale_face(const Grid3& grid, int face, T factor, T* field) {
  activate();
  launch_scale_face(grid, face, factor, field, stream_);
}

template <class T>
void CudaBackend<T>::robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) {
  activate();
  launch_robin_data(op, face, u_inf, u, g, stream_);
}

template <class T>
void CudaBackend<T>::face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau,
                                            const T* in, T* out) {
  activate();
  launch_face_tangential_factor(op, face, axis, tau, in, out, stream_);
}

template <class T>
void CudaBackend<T>::axpy(T a, const T* x, T* y, std::size_t n) {
  if (n == 0) return;
  activate();
  launch_axpy(a, x, y, n, stream_);
}

template <class T>
void CudaBackend<T>::axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) {
  if (n == 0) return;
  activate();
  launch_axpby_converted(a, x, b, y, n, stream_);
}

template <class T>
void CudaBackend<T>::add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node,
                                        T* x, std::size_t plane, std::size_t planes) {
  if (plane == 0 || planes == 0) return;
  activate();
  launch_add_coupling_terms(y, v, a, w, b, per_node, x, plane, planes, stream_);
}

template <class T>
void CudaBackend<T>::copy(const T* src, T* dst, std::size_t n) {
  if (n == 0) return;
  activate();
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
}

template <class T>
void CudaBackend<T>::multiply(const T* s, T* x, std::size_t n) {
  if (n == 0) return;
  activate();
  launch_multiply(s, x, n, stream_);
}

template <class T>
void CudaBackend<T>::layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) {
  if (layer_alpha.empty() || plane == 0) return;
  activate();
  Array<T> layers = allocate(layer_alpha.size());
  upload(layer_alpha.data(), layers.data(), layer_alpha.size());
  launch_layer_scaling(alpha, layers.data(), plane, layer_alpha.size(), s, stream_);
  synchronize();  // before `layers` goes
}

template <class T>
template <class Launch>
std::vector<double> CudaBackend<T>::doubles_from(std::size_t count, Launch launch) {
  activate();
  Array<double> device = device_allocate<double>(count);
  launch(device.data());
  std::vector<double> host(count);
  ADI3D_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), device.data(), count * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `device` goes, and for `host`
  return host;
}

template <class T>
std::vector<double> CudaBackend<T>::plane_sums(const T* x, std::size_t plane, std::size_t planes) {
  if (planes == 0) return {};
  return doubles_from(planes, [&](double* out) { launch_plane_sums(x, plane, planes, out, stream_); });
}

template <class T>
double CudaBackend<T>::in_plane_jump(const T* alpha, const std::array<int, 3>& n) {
  const std::size_t size = static_cast<std::size_t>(n[0]) * n[1] * n[2];
  if (size == 0) return 1;
  const auto blocks = static_cast<std::size_t>(in_plane_jump_blocks(size));
  const std::vector<double> block_max =
      doubles_from(blocks, [&](double* out) { launch_in_plane_jump(alpha, n[0], n[1], size, out, stream_); });
  return *std::max_element(block_max.begin(), block_max.end());
}

template <class T>
void CudaBackend<T>::solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above) {
  activate();
  if (launch_solve_reduced_lines(lines, messages, x_below, x_above, stream_)) return;
  // More ranks than the kernel's scratch takes: on the host.
  std::vector<T> host(lines.message_size() * static_cast<std::size_t>(lines.ranks)), below(lines.plane),
      above(lines.plane);
  download(messages, host.data(), host.size());
  solve_reduced_systems(lines, host.data(), below.data(), above.data());
  upload(below.data(), x_below, lines.plane);
  upload(above.data(), x_above, lines.plane);
}

template <class T>
template <class Launch>
std::array<double, kNormValues> CudaBackend<T>::reduce(Launch launch) {
  activate();
  NormScratch s{norm_buf_.data(), counter_.data(), norm_buf_.data() + kNormValues * norm_blocks_,
                norm_blocks_};
  launch(s);
  std::array<double, kNormValues> host{};
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(host.data(), s.result, sizeof host, cudaMemcpyDeviceToHost, stream_));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

template <class T>
Norms CudaBackend<T>::difference_norms(const T* x, const T* y, std::size_t n) {
  if (n == 0) return {};
  const auto r = reduce([&](const NormScratch& s) { launch_difference_norms(x, y, n, s, stream_); });
  return propagate_nan({r[0], r[1], r[2], r[3]});
}

template <class T>
double CudaBackend<T>::dot(const T* x, const T* y, std::size_t n) {
  if (n == 0) return 0;
  return reduce([&](const NormScratch& s) { launch_dot(x, y, n, s, stream_); })[2];  // the "sum" slot
}

template <class T>
void CudaBackend<T>::synchronize() {
  activate();
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T>
bool CudaBackend<T>::fused_douglas_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau,
                                        T* scratch) {
  activate();
  fused_.set_merge_xy(policy_.fused_xy);
  fused_.set_variable_x_pass(policy_.variable_x_pass);
  return fused_.run(op, u, f, dt, tau, scratch, stream_);
}

template <class T>
bool CudaBackend<T>::fused_slab_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* scratch,
                                     SlabCoupling<T>& coupling) {
  activate();
  return fused_.run_slab(op, u, f, dt, tau, scratch, stream_, coupling);
}

template <class T>
bool CudaBackend<T>::fuses_douglas_step(const OperatorView<T>& op) {
  activate();
  return fused_.applies(op, device_);
}

template <class T>
std::unique_ptr<SpectralSolve<T>> CudaBackend<T>::make_spectral_solve(const OperatorView<T>& op,
                                                                      const SpectralLayers<T>& layers) {
  activate();
  return make_cuda_spectral_solve(op, layers, *this, stream_, device_);
}

template class CudaBackend<float>;
template class CudaBackend<double>;

namespace {

template <class T>
CudaBackend<T>& as_cuda(Backend<T>& b) {
  auto* c = dynamic_cast<CudaBackend<T>*>(&b);
  if (!c) throw BackendUnavailable("CUDA kernel variants apply to the cuda backend only, not to " +
                                   b.description());
  return *c;
}

}  // namespace
}  // namespace cuda

template <class T>
std::unique_ptr<Backend<T>> make_cuda_backend(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw BackendUnavailable(std::string("the CUDA backend cannot run here: ") +
                             cudaGetErrorString(err) + " (no NVIDIA driver or device)");
  }
  if (count == 0) throw BackendUnavailable("the CUDA backend cannot run here: no CUDA device found");
  if (device < 0 || device >= count)
    throw BackendUnavailable("CUDA device " + std::to_string(device) + " requested, but " +
                             std::to_string(count) + " device(s) present (0.." +
                             std::to_string(count - 1) + ")");
  return std::make_unique<cuda::CudaBackend<T>>(device);
}
template std::unique_ptr<Backend<float>> make_cuda_backend<float>(int);
template std::unique_ptr<Backend<double>> make_cuda_backend<double>(int);

const char* to_string(StencilVariant v) {
  switch (v) {
    case StencilVariant::naive: return "naive";
    case StencilVariant::zpencil: return "zpencil";
    case StencilVariant::zpencil_smem: return "zpencil_smem";
    case StencilVariant::shuffle: return "shuffle";
    case StencilVariant::planes: return "planes";
  }
  return "?";
}
const char* to_string(XSolveVariant v) {
  switch (v) {
    case XSolveVariant::pcr_thomas: return "pcr_thomas";
    case XSolveVariant::thread_thomas: return "thread_thomas";
    case XSolveVariant::cusparse: return "cusparse_gtsv2StridedBatch";
    case XSolveVariant::register_cr: return "register_cr";
    case XSolveVariant::tridiag: return "tridiag";
    case XSolveVariant::warp_lines: return "warp_lines";
  }
  return "?";
}
const char* to_string(LineScratch v) {
  switch (v) {
    case LineScratch::automatic: return "automatic";
    case LineScratch::shared: return "shared";
    case LineScratch::global: return "global";
  }
  return "?";
}

template <class T>
CudaPolicy cuda_policy(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).policy();
}
template <class T>
void set_cuda_policy(Backend<T>& backend, const CudaPolicy& policy) {
  cuda::as_cuda(backend).set_policy(policy);
}
template <class T>
void set_stencil_variant(Backend<T>& backend, StencilVariant v) {
  CudaPolicy p = cuda_policy(backend);
  p.stencil = v;
  set_cuda_policy(backend, p);
}
template <class T>
void set_x_solve_variant(Backend<T>& backend, XSolveVariant v) {
  CudaPolicy p = cuda_policy(backend);
  p.x_solve = v;
  set_cuda_policy(backend, p);
}

template <class T>
StencilVariant last_stencil_variant(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).last_stencil();
}
template <class T>
XSolveVariant last_x_solve_variant(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).last_x_solve();
}
template <class T>
bool last_yz_by_warp(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).last_yz_by_warp();
}
template <class T>
bool last_fused_xy(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).last_fused_xy();
}
template <class T>
bool last_variable_x_pass(const Backend<T>& backend) {
  return cuda::as_cuda(const_cast<Backend<T>&>(backend)).last_variable_x_pass();
}

template <class T>
bool bulk_copy_kernels_usable(const Backend<T>& backend) {
  return cuda::planes_stencil_usable<T>(cuda::as_cuda(const_cast<Backend<T>&>(backend)).device());
}

#define ADI3D_INSTANTIATE_VARIANTS(T)                                  \
  template bool bulk_copy_kernels_usable<T>(const Backend<T>&);        \
  template CudaPolicy cuda_policy<T>(const Backend<T>&);               \
  template void set_cuda_policy<T>(Backend<T>&, const CudaPolicy&);    \
  template void set_stencil_variant<T>(Backend<T>&, StencilVariant);   \
  template void set_x_solve_variant<T>(Backend<T>&, XSolveVariant);   \
  template StencilVariant last_stencil_variant<T>(const Backend<T>&); \
  template XSolveVariant last_x_solve_variant<T>(const Backend<T>&);   \
  template bool last_yz_by_warp<T>(const Backend<T>&);                 \
  template bool last_fused_xy<T>(const Backend<T>&);                   \
  template bool last_variable_x_pass<T>(const Backend<T>&);
ADI3D_INSTANTIATE_VARIANTS(float)
ADI3D_INSTANTIATE_VARIANTS(double)
#undef ADI3D_INSTANTIATE_VARIANTS

}  // namespace adi3d
