// The cuSPARSE Douglas step of `adi3d bench adi` (adi_bench.hpp), written as a user of the
// library would: rhs kernel (2 arrays, written in x, z, y order so that the y systems are
// interleaved), gtsv2StridedBatch on x lines, gtsvInterleavedBatch (algo 0, cuThomas) on y
// lines, one permutation back (2 arrays), gtsvInterleavedBatch on z lines, u += du
// (3 arrays). Each solve reads three grid-sized coefficient arrays besides the data;
// arrays that cuSPARSE overwrites are formed again before each use (1 write each).
#include "solvers/bench/adi_bench.hpp"
#include "solvers/cuda/backend/backend_cast.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/cuda/line_solves/cusparse_calls.cuh"
#include "solvers/bench/explicit_stencil.cuh"
#include "solvers/discretization.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace adi3d::cuda {
namespace {

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535));
}

// Rows of (I - tau A_axis) from the shared point rules; element e belongs to row
// (e / stride) % rows of its system. Null outputs are skipped.
template <class T>
__global__ void coefficient_kernel(OperatorView<T> op, int axis, T tau, std::size_t stride, int rows,
                                   std::size_t n, T* __restrict__ dl, T* __restrict__ d, T* __restrict__ du) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>((e / stride) % rows);
    const TriRow<T> r = implicit_row(axis_row(op, axis, row, static_cast<std::size_t>(row), 1), tau);
    if (dl) dl[e] = r.a;  // identity rows make the first dl and the last du zero
    if (d) d[e] = r.b;
    if (du) du[e] = r.c;
  }
}

// out (x, y, z order) = in (x, z, y order): whole x rows, coalesced on both sides.
template <class T>
__global__ void xzy_to_xyz_kernel(int nx, int ny, int nz, const T* __restrict__ in, T* __restrict__ out) {
  const int j = blockIdx.y, k = blockIdx.z;
  const T* src = in + static_cast<std::size_t>(nx) * (k + static_cast<std::size_t>(nz) * j);
  T* dst = out + static_cast<std::size_t>(nx) * (j + static_cast<std::size_t>(ny) * k);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nx; i += gridDim.x * blockDim.x) dst[i] = src[i];
}

template <class T>
__global__ void count_changed_kernel(const T* __restrict__ a, const T* __restrict__ b, std::size_t n,
                                     unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < n;
       e += std::size_t(gridDim.x) * blockDim.x)
    local += a[e] != b[e] ? 1 : 0;
  if (local) atomicAdd(count, local);
}

constexpr const char* kArrayNames[9] = {"x dl", "x d", "x du", "y dl", "y d", "y du", "z dl", "z d", "z du"};
constexpr const char* kStageNames[6] = {"rhs dt A u (x, z, y order)", "x lines: gtsv2StridedBatch",
                                        "y lines: gtsvInterleavedBatch", "permute to x, y, z",
                                        "z lines: gtsvInterleavedBatch", "u += du"};

}  // namespace

template <class T>
struct CusparseDouglasStep<T>::Impl {
  Backend<T>& backend;
  cudaStream_t stream;
  OperatorView<T> op;
  int n[3];
  std::size_t points;
  T dt, tau;
  T w[3];
  Array<T> coef[9];  // x dl, d, du; y ...; z ...
  bool rebuild[9] = {};
  std::vector<std::string> rebuilt;
  Array<T> r, t;      // du in x, z, y order; du in x, y, z order
  Array<T> buffer;    // cuSPARSE work space (T-sized units, 256-byte aligned by cudaMalloc)
  Array<T> plane[3];  // y coefficients of one z plane (solve_y_per_plane), made on first use
  Array<T> plane_buffer;
  cusparseHandle_t handle = nullptr;

  ~Impl() {
    if (handle) {
      static_cast<void>(cudaStreamSynchronize(stream));
      static_cast<void>(cusparseDestroy(handle));
    }
  }
  void y_per_plane(T* d) {
    const std::size_t plane_points = static_cast<std::size_t>(n[0]) * n[1];
    auto form_plane = [&](bool dl, bool dd, bool du) {
      coefficient_kernel<T><<<blocks_for(plane_points), 256, 0, stream>>>(
          op, 1, tau, static_cast<std::size_t>(n[0]), n[1], plane_points, dl ? plane[0].data() : nullptr,
          dd ? plane[1].data() : nullptr, du ? plane[2].data() : nullptr);
      ADI3D_CUDA_LAUNCH_CHECK();
    };
    if (plane[0].empty()) {
      for (Array<T>& a : plane) a = backend.allocate(plane_points);
      form_plane(true, true, true);
      std::size_t bytes = 0;
      check_cusparse(gtsv_interleaved_buffer(handle, n[1], plane[0].data(), plane[1].data(), plane[2].data(), d, n[0],
                                        &bytes),
                     "gtsvInterleavedBatch_bufferSizeExt (y planes)");
      plane_buffer = backend.allocate(std::max(bytes, sizeof(T)) / sizeof(T) + 1);
    }
    for (int k = 0; k < n[2]; ++k) {
      if (k > 0 && (rebuild[3] || rebuild[4] || rebuild[5])) form_plane(rebuild[3], rebuild[4], rebuild[5]);
      check_cusparse(gtsv_interleaved(handle, n[1], plane[0].data(), plane[1].data(), plane[2].data(),
                                       d + static_cast<std::size_t>(k) * plane_points, n[0], plane_buffer.data()),
                     "gtsvInterleavedBatch (y lines of one plane)");
    }
    if (rebuild[3] || rebuild[4] || rebuild[5]) form_plane(rebuild[3], rebuild[4], rebuild[5]);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Impl(Backend<T>& b, const Diffusion<T>& d, double dt_in, double theta)
      : backend(b), stream(cuda_backend_of(b).stream()), op(make_operator_view(d, nullptr)) {
    for (int a = 0; a < 3; ++a) {
      n[a] = d.grid.n[a];
      w[a] = row_weights(RowKind::interior, op.alpha[a], op.alpha[a], op.alpha[a], op.inv_h2[a]).wm;
    }
    points = d.grid.size();
    dt = static_cast<T>(dt_in);
    tau = static_cast<T>(theta * dt_in);
  }

  // Element e of axis a's arrays is row (e / stride) % rows.
  std::size_t stride(int axis) const {
    return axis == 0 ? 1 : axis == 1 ? static_cast<std::size_t>(n[0]) * n[2] : static_cast<std::size_t>(n[0]) * n[1];
  }
  void form(int axis, bool dl, bool d, bool du) {
    T* base[3] = {coef[3 * axis].data(), coef[3 * axis + 1].data(), coef[3 * axis + 2].data()};
    coefficient_kernel<T><<<blocks_for(points), 256, 0, stream>>>(
        op, axis, tau, stride(axis), n[axis], points, dl ? base[0] : nullptr, d ? base[1] : nullptr,
        du ? base[2] : nullptr);
    ADI3D_CUDA_LAUNCH_CHECK();
  }
  void form_overwritten(int axis) {
    if (rebuild[3 * axis] || rebuild[3 * axis + 1] || rebuild[3 * axis + 2])
      form(axis, rebuild[3 * axis], rebuild[3 * axis + 1], rebuild[3 * axis + 2]);
  }
  T* c(int axis, int which) { return coef[3 * axis + which].data(); }

  void stage(int s, T* u) {
    switch (s) {
      case 0:
        launch_explicit_stencil<T, ExplicitOut::rhs_xzy>(n, w, dt, u, r.data(), stream);
        break;
      case 1:
        form_overwritten(0);
        check_cusparse(gtsv2_strided(handle, n[0], c(0, 0), c(0, 1), c(0, 2), r.data(), n[1] * n[2], n[0],
                                     buffer.data()),
                       "gtsv2StridedBatch (x lines)");
        break;
      case 2:
        form_overwritten(1);
        check_cusparse(gtsv_interleaved(handle, n[1], c(1, 0), c(1, 1), c(1, 2), r.data(), n[0] * n[2],
                                         buffer.data()),
                       "gtsvInterleavedBatch (y lines)");
        break;
      case 3:
        xzy_to_xyz_kernel<T><<<dim3((n[0] + 127) / 128, n[1], n[2]), 128, 0, stream>>>(n[0], n[1], n[2],
                                                                                     r.data(), t.data());
        ADI3D_CUDA_LAUNCH_CHECK();
        break;
      case 4:
        form_overwritten(2);
        check_cusparse(gtsv_interleaved(handle, n[2], c(2, 0), c(2, 1), c(2, 2), t.data(), n[0] * n[1],
                                         buffer.data()),
                       "gtsvInterleavedBatch (z lines)");
        break;
      default:
        launch_axpy(T(1), t.data(), u, points, stream);
        break;
    }
  }
};

template <class T>
CusparseDouglasStep<T>::CusparseDouglasStep(Backend<T>& backend, const Diffusion<T>& d, double dt,
                                            double theta) {
  for (int f = 0; f < 6; ++f)
    if (d.bc.face[f] != BoundaryKind::dirichlet)
      throw std::invalid_argument("CusparseDouglasStep: every face must be Dirichlet");
  if (!d.alpha_field.empty() || d.backend_alpha)
    throw std::invalid_argument("CusparseDouglasStep: alpha must be constant");
  for (int a = 0; a < 3; ++a)
    if (d.grid.n[a] < 3 || d.grid.n[a] > 65535)
      throw std::invalid_argument("CusparseDouglasStep: 3 to 65535 nodes per axis");
  impl_ = std::make_unique<Impl>(backend, d, dt, theta);
  Impl& m = *impl_;
  for (Array<T>& a : m.coef) a = backend.allocate(m.points);
  m.r = backend.allocate(m.points);
  m.t = backend.allocate(m.points);
  for (int axis = 0; axis < 3; ++axis) m.form(axis, true, true, true);

  check_cusparse(cusparseCreate(&m.handle), "cusparseCreate");
  check_cusparse(cusparseSetStream(m.handle, m.stream), "cusparseSetStream");
  std::size_t bytes[3] = {0, 0, 0};
  check_cusparse(gtsv2_strided_buffer(m.handle, m.n[0], m.c(0, 0), m.c(0, 1), m.c(0, 2), m.r.data(), m.n[1] * m.n[2],
                                m.n[0], &bytes[0]),
                 "gtsv2StridedBatch_bufferSizeExt");
  check_cusparse(gtsv_interleaved_buffer(m.handle, m.n[1], m.c(1, 0), m.c(1, 1), m.c(1, 2), m.r.data(),
                                    m.n[0] * m.n[2], &bytes[1]),
                 "gtsvInterleavedBatch_bufferSizeExt (y)");
  check_cusparse(gtsv_interleaved_buffer(m.handle, m.n[2], m.c(2, 0), m.c(2, 1), m.c(2, 2), m.t.data(),
                                    m.n[0] * m.n[1], &bytes[2]),
                 "gtsvInterleavedBatch_bufferSizeExt (z)");
  const std::size_t most = std::max({bytes[0], bytes[1], bytes[2], sizeof(T)});
  m.buffer = backend.allocate((most + sizeof(T) - 1) / sizeof(T));

  // Probe: run the three solves once on random data, then compare every coefficient array
  // with a fresh copy. The library's documentation does not promise gtsvInterleavedBatch
  // leaves dl, d, du alone (they are not const); what it changed is formed again each step.
  fill_random(backend, m.r.data(), m.points, 12345u, 0.5, 1.5);
  for (int s = 1; s <= 4; ++s) m.stage(s, nullptr);
  unsigned long long* count = nullptr;
  ADI3D_CUDA_CHECK(cudaMallocAsync(&count, sizeof(unsigned long long), m.stream));
  for (int a = 0; a < 9; ++a) {
    const int axis = a / 3, which = a % 3;
    ADI3D_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(unsigned long long), m.stream));
    coefficient_kernel<T><<<blocks_for(m.points), 256, 0, m.stream>>>(
        m.op, axis, m.tau, m.stride(axis), m.n[axis], m.points, which == 0 ? m.r.data() : nullptr,
        which == 1 ? m.r.data() : nullptr, which == 2 ? m.r.data() : nullptr);
    ADI3D_CUDA_LAUNCH_CHECK();
    count_changed_kernel<T><<<blocks_for(m.points), 256, 0, m.stream>>>(m.r.data(), m.coef[a].data(), m.points,
                                                                        count);
    ADI3D_CUDA_LAUNCH_CHECK();
    unsigned long long changed = 0;
    ADI3D_CUDA_CHECK(cudaMemcpyAsync(&changed, count, sizeof changed, cudaMemcpyDeviceToHost, m.stream));
    ADI3D_CUDA_CHECK(cudaStreamSynchronize(m.stream));
    if (changed) {
      m.rebuild[a] = true;
      m.rebuilt.push_back(kArrayNames[a]);
    }
  }
  ADI3D_CUDA_CHECK(cudaFreeAsync(count, m.stream));
  for (int axis = 0; axis < 3; ++axis) m.form(axis, true, true, true);
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

template <class T>
CusparseDouglasStep<T>::~CusparseDouglasStep() = default;

template <class T>
void CusparseDouglasStep<T>::step(T* u) {
  for (int s = 0; s < stage_count(); ++s) impl_->stage(s, u);
}

template <class T>
int CusparseDouglasStep<T>::stage_count() {
  return 6;
}

template <class T>
const char* CusparseDouglasStep<T>::stage_name(int stage) {
  return kStageNames[std::clamp(stage, 0, 5)];
}

template <class T>
void CusparseDouglasStep<T>::run_stage(int stage, T* u) {
  impl_->stage(stage, u);
}

template <class T>
void CusparseDouglasStep<T>::solve_y_per_plane(T* d) {
  impl_->y_per_plane(d);
}

template <class T>
const std::vector<std::string>& CusparseDouglasStep<T>::rebuilt_each_step() const {
  return impl_->rebuilt;
}

template <class T>
std::size_t CusparseDouglasStep<T>::device_bytes() const {
  return (11 * impl_->points + impl_->buffer.size()) * sizeof(T);
}

template <class T>
std::size_t CusparseDouglasStep<T>::estimate_bytes(const Grid3& grid) {
  // 9 coefficient arrays, 2 scratch arrays, and a work space of about 2 more.
  return 13 * grid.size() * sizeof(T);
}

template class CusparseDouglasStep<float>;
template class CusparseDouglasStep<double>;

}  // namespace adi3d::cuda
