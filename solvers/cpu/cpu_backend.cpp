// CPU backend: memory, copies, the operator right-hand side, face writes and reductions.
#include "solvers/cpu/cpu_backend.hpp"

#include "solvers/byte_size.hpp"
#include "solvers/cpu/cpu_spectral.hpp"

#include "solvers/discretization.hpp"
#include "solvers/distributed/coupling_terms.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/fault_injection.hpp"
#include "solvers/nan_norms.hpp"
#include "solvers/poison.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

namespace adi3d::cpu {

template <class T>
std::string CpuBackend<T>::description() const {
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
}

template <class T>
Array<T> CpuBackend<T>::allocate(std::size_t n) {
  // 64-byte alignment keeps vector loads aligned on every row start that is.
  const std::size_t bytes = ((n * sizeof(T) + 63) / 64) * 64;
  T* p = nullptr;
  const bool injected = fault_due(FaultKind::alloc);
  try {
    if (injected) throw std::bad_alloc();
    p = static_cast<T*>(::operator new(std::max<std::size_t>(bytes, 64), std::align_val_t(64)));
  } catch (const std::bad_alloc&) {
    // "std::bad_alloc" alone would not say what ran out or what to do.
    throw BackendUnavailable("host allocation failed: an array needs " + byte_size(bytes) +
                             " (use a smaller grid, float, or more ranks)" +
                             (injected ? "; " + injected_fault_note() : std::string()));
  }
  poison_host(p, bytes);
  return Array<T>(p, n, [](T* q) { ::operator delete(q, std::align_val_t(64)); });
}

template <class T>
void CpuBackend<T>::upload(const T* host, T* dst, std::size_t n) {
  if (n) std::memcpy(dst, host, n * sizeof(T));
}

template <class T>
void CpuBackend<T>::download(const T* src, T* host, std::size_t n) {
  if (n) std::memcpy(host, src, n * sizeof(T));
}

template <class T>
void CpuBackend<T>::fill(T* x, T value, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) x[e] = value;
}

template <class T>
void CpuBackend<T>::add_constant(T* x, double value, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) x[e] = static_cast<T>(x[e] + value);
}

namespace {

// value + f + the Neumann terms at unknown node (i, j, k), in the point rule's order.
template <class T>
T finish_rhs(const OperatorView<T>& op, T value, const T* f, const FaceData<T>& neumann, int i, int j, int k,
             std::size_t p) {
  if (f) value += f[p];
  const int idx[3] = {i, j, k};
  for (int a = 0; a < 3; ++a) {
    const RowKind kind = row_kind(idx[a], op.n[a], op.lo[a], op.hi[a]);
    const int side = kind == RowKind::neumann_lo ? 0 : kind == RowKind::neumann_hi ? 1 : -1;
    const T* g = side >= 0 ? neumann[face_index(a, side)] : nullptr;
    if (!g) continue;
    const int ua = a == 0 ? 1 : 0, va = a == 2 ? 1 : 2;
    const std::size_t fp = idx[ua] + static_cast<std::size_t>(op.n[ua]) * idx[va];
    value += neumann_term(kind, alpha_at(op, a, p), g[fp], op.inv_h[a]);
  }
  return value;
}

// The full point rule (boundary kinds, variable alpha, Neumann data) at one node.
template <class T>
T rhs_at(const OperatorView<T>& op, const T* u, const T* f, const FaceData<T>& neumann, int i, int j,
         int k, std::size_t p) {
  if (is_dirichlet_node(op, i, j, k)) return T(0);
  return finish_rhs(op, apply_operator(op, u, i, j, k), f, neumann, i, j, k, p);
}

}  // namespace

template <class T>
void CpuBackend<T>::operator_rhs(const OperatorView<T>& op, const T* u, const T* f,
                                 const FaceData<T>& neumann, T scale, T* r) {
  const int nx = op.n[0], ny = op.n[1], nz = op.n[2];
  const std::size_t sy = nx, sz = static_cast<std::size_t>(nx) * ny;
  // Constant alpha: rows whose y and z neighbours are all interior use a vectorised
  // 7-point loop for i = 1..nx-2; every other node takes the general point rule.
  const bool constant = op.alpha_field == nullptr;
  const T cx = op.alpha[0] * op.inv_h2[0], cy = op.alpha[1] * op.inv_h2[1], cz = op.alpha[2] * op.inv_h2[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      const std::size_t row = sy * j + sz * k;
      const bool fast = constant && j > 0 && j < ny - 1 && k > 0 && k < nz - 1 && nx > 2;
      if (fast) {
        const T* uc = u + row;
        T* out = r + row;
        const T* fr = f ? f + row : nullptr;
#pragma omp simd
        for (int i = 1; i < nx - 1; ++i) {
          const T c = uc[i];
          T v = cx * (uc[i - 1] + uc[i + 1] - 2 * c) + cy * (uc[i - sy] + uc[i + sy] - 2 * c) +
                cz * (uc[i - sz] + uc[i + sz] - 2 * c);
          if (fr) v += fr[i];
          out[i] = scale * v;
        }
        r[row] = scale * rhs_at(op, u, f, neumann, 0, j, k, row);
        r[row + nx - 1] = scale * rhs_at(op, u, f, neumann, nx - 1, j, k, row + nx - 1);
        continue;
      }
      for (int i = 0; i < nx; ++i) r[row + i] = scale * rhs_at(op, u, f, neumann, i, j, k, row + i);
    }
  }
}

template <class T>
void CpuBackend<T>::fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base,
                                       T* f) {
  const unsigned faces = neumann_data_faces(op, neumann.data());
  for (int face = 0; face < 6; ++face) {
    if (!((faces >> face) & 1u)) continue;
    const FaceAxes fa = face_axes(face);
    const int nu = op.n[fa.u], nv = op.n[fa.v];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nv; ++b)
      for (int a = 0; a < nu; ++a) {
        int i = 0, j = 0, k = 0;
        face_node_indices(op.n, face, a, b, i, j, k);
        if (is_dirichlet_node(op, i, j, k) || on_earlier_face(op.n, faces, face, i, j, k)) continue;
        const std::size_t p = face_node(op.n, face, a, b);
        f[p] = finish_rhs(op, T(0), base, neumann, i, j, k, p);
      }
  }
}

template <class T>
void CpuBackend<T>::robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) {
  const FaceAxes fa = face_axes(face);
  const int nu = op.n[fa.u], nv = op.n[fa.v];
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b)
    for (int a = 0; a < nu; ++a) g[a + static_cast<std::size_t>(nu) * b] = robin_derivative(op, face, u_inf, u, a, b);
}

template <class T>
void CpuBackend<T>::set_face(const Grid3& grid, int face, const T* values, T* field) {
  const FaceAxes fa = face_axes(face);
  const int nu = grid.n[fa.u], nv = grid.n[fa.v];
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b)
    for (int a = 0; a < nu; ++a)
      field[face_node(grid, face, a, b)] = values[a + static_cast<std::size_t>(nu) * b];
}

template <class T>
void CpuBackend<T>::scale_face(const Grid3& grid, int face, T factor, T* field) {
  const FaceAxes fa = face_axes(face);
  const int nu = grid.n[fa.u], nv = grid.n[fa.v];
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b)
    for (int a = 0; a < nu; ++a) field[face_node(grid, face, a, b)] *= factor;
}

template <class T>
void CpuBackend<T>::face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau,
                                           const T* in, T* out) {
  const FaceAxes fa = face_axes(face);
  const int nu = op.n[fa.u], nv = op.n[fa.v];
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nv; ++b)
    for (int a = 0; a < nu; ++a)
      out[a + static_cast<std::size_t>(nu) * b] = tangential_factor(op, face, axis, tau, in, a, b);
}

template <class T>
void CpuBackend<T>::axpy(T a, const T* x, T* y, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) y[e] += a * x[e];
}

template <class T>
void CpuBackend<T>::axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) {
  if (b == 0) {
#pragma omp parallel for simd schedule(static)
    for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) y[e] = static_cast<T>(a * x[e]);
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e)
    y[e] = static_cast<T>(a * static_cast<double>(x[e]) + b * static_cast<double>(y[e]));
}

template <class T>
void CpuBackend<T>::add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node,
                                       T* x, std::size_t plane, std::size_t planes) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(planes); ++k) {
    const std::size_t base = static_cast<std::size_t>(k) * plane;
    for (std::size_t i = 0; i < plane; ++i) {
      const std::size_t p = base + i, c = per_node ? p : static_cast<std::size_t>(k);
      x[p] += coupling_term(y, v, a, w, b, p, c, i);
    }
  }
}

template <class T>
void CpuBackend<T>::copy(const T* src, T* dst, std::size_t n) {
  if (n) std::memcpy(dst, src, n * sizeof(T));
}

template <class T>
void CpuBackend<T>::multiply(const T* s, T* x, std::size_t n) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) x[e] *= s[e];
}

template <class T>
void CpuBackend<T>::layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) {
  const auto planes = static_cast<std::ptrdiff_t>(layer_alpha.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::size_t e = static_cast<std::size_t>(k) * plane; e < static_cast<std::size_t>(k + 1) * plane; ++e)
      s[e] = std::sqrt(layer_alpha[static_cast<std::size_t>(k)] / alpha[e]);
}

template <class T>
double CpuBackend<T>::in_plane_jump(const T* alpha, const std::array<int, 3>& n) {
  const std::size_t nx = static_cast<std::size_t>(n[0]), ny = static_cast<std::size_t>(n[1]);
  const auto rows = static_cast<std::ptrdiff_t>(ny * static_cast<std::size_t>(n[2]));
  double largest = 1;
#pragma omp parallel for reduction(max : largest) schedule(static)
  for (std::ptrdiff_t row = 0; row < rows; ++row) {
    const std::size_t j = static_cast<std::size_t>(row) % ny, start = static_cast<std::size_t>(row) * nx;
    for (std::size_t i = 0; i < nx; ++i) {
      const double a = alpha[start + i];
      if (i + 1 < nx) largest = std::max(largest, std::max(a / alpha[start + i + 1], alpha[start + i + 1] / a));
      if (j + 1 < ny) largest = std::max(largest, std::max(a / alpha[start + i + nx], alpha[start + i + nx] / a));
    }
  }
  return largest;
}

template <class T>
Norms CpuBackend<T>::difference_norms(const T* x, const T* y, std::size_t n) {
  double sum_sq = 0, max_abs = 0, sum = 0, sum_abs = 0;
#pragma omp parallel for reduction(+ : sum_sq, sum, sum_abs) reduction(max : max_abs) schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e) {
    const double v = static_cast<double>(x[e]) - (y ? static_cast<double>(y[e]) : 0.0);
    sum_sq += v * v;
    sum += v;
    const double magnitude = std::fabs(v);
    sum_abs += magnitude;
    max_abs = std::max(max_abs, magnitude);
  }
  return propagate_nan({sum_sq, max_abs, sum, sum_abs});
}

template <class T>
double CpuBackend<T>::dot(const T* x, const T* y, std::size_t n) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::ptrdiff_t e = 0; e < static_cast<std::ptrdiff_t>(n); ++e)
    sum += static_cast<double>(x[e]) * static_cast<double>(y[e]);
  return sum;
}

template <class T>
std::unique_ptr<SpectralSolve<T>> CpuBackend<T>::make_spectral_solve(const OperatorView<T>& op,
                                                                     const SpectralLayers<T>& layers) {
  return make_cpu_spectral_solve(op, layers);
}

template class CpuBackend<float>;
template class CpuBackend<double>;

}  // namespace adi3d::cpu

namespace adi3d {

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
  return std::make_unique<cpu::CpuBackend<T>>();
}
template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace adi3d
