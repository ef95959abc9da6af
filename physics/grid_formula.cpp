#include "physics/grid_formula.hpp"

#include "physics/grid_functions.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace adi3d::physics {

template <class T>
GridFormula<T>::GridFormula(Formula formula, const SlabDecomposition& slab, bool keep_range)
    : formula_(std::move(formula)), slab_(slab), keep_range_(keep_range), host_range_{INFINITY, -INFINITY} {}

template <class T>
GridFormula<T>::~GridFormula() = default;

template <class T>
const rtc::DeviceFunction<T>* GridFormula<T>::device(Backend<T>& backend) const {
  if (backend.kind() != BackendKind::cuda || device_failed_) return nullptr;
  if (!device_) {
    const auto start = std::chrono::steady_clock::now();
    try {
      device_ = std::make_unique<rtc::DeviceFunction<T>>(formula_.device_expression(), backend.device());
    } catch (const std::exception& e) {
      device_failed_ = true;
      spdlog::warn("{} = {} is sampled on the host: {}", formula_.key(), formula_.text(), e.what());
      return nullptr;
    }
    compile_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return device_.get();
}

template <class T>
void GridFormula<T>::record(const std::optional<NonFiniteNode>& node, double t) const {
  if (node && !host_non_finite_) host_non_finite_ = NonFiniteSample{formula_.key(), node->x, node->y, node->z, t, node->value};
}

template <class T>
T GridFormula<T>::check_constant(double t) const {
  const T v = static_cast<T>(formula_(0, 0, 0, t));
  if (!std::isfinite(v))  // its first node: the slab's first
    record(NonFiniteNode{slab_.whole.lo[0], slab_.whole.lo[1], slab_.whole.coord(2, slab_.whole_plane(0)), double(v)},
           t);
  return v;
}

template <class T>
void GridFormula<T>::widen_range(const std::vector<T>& values) const {
  if (!keep_range_) return;
  double lo = host_range_[0], hi = host_range_[1];
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static)
  for (std::size_t p = 0; p < values.size(); ++p) {
    if (!std::isfinite(values[p])) continue;
    lo = std::min(lo, static_cast<double>(values[p]));
    hi = std::max(hi, static_cast<double>(values[p]));
  }
  host_range_ = {lo, hi};
}

template <class T>
void GridFormula<T>::sample(double t, T* values, Backend<T>& backend) const {
  const std::size_t n = slab_.local.size();
  if (formula_.is_constant()) {
    // No code to compile: a fill. Its value may still overflow T (1e300 in a float run).
    const T v = check_constant(t);
    backend.fill(values, v, n);
    if (keep_range_ && std::isfinite(v))
      host_range_ = {std::min(host_range_[0], double(v)), std::max(host_range_[1], double(v))};
    return;
  }
  if (const rtc::DeviceFunction<T>* fn = device(backend)) {
    fn->sample_slab(slab_, t, values, backend.cuda_stream(), nullptr, keep_range_);
    return;
  }
  std::vector<T> host(n);
  record(sample_slab(formula_, slab_, t, host.data()), t);
  widen_range(host);
  backend.upload(host.data(), values, n);
}

template <class T>
void GridFormula<T>::sample_error(double t, const T* u, T* out, Backend<T>& backend) const {
  const std::size_t n = slab_.local.size();
  if (formula_.is_constant()) {
    check_constant(t);
    backend.copy(u, out, n);
    backend.add_constant(out, -formula_(0, 0, 0, t), n);  // T(u - c), the difference in double
    return;
  }
  if (const rtc::DeviceFunction<T>* fn = device(backend)) {
    fn->sample_slab(slab_, t, out, backend.cuda_stream(), u);
    return;
  }
  std::vector<T> host_u(n), host_error(n);
  backend.download(u, host_u.data(), n);
  record(sample_slab(formula_, slab_, t, host_error.data(), host_u.data()), t);
  backend.upload(host_error.data(), out, n);
}

template <class T>
std::optional<NonFiniteSample> GridFormula<T>::first_non_finite() const {
  if (host_non_finite_) return host_non_finite_;
  if (!device_) return std::nullopt;
  const auto entry = device_->first_non_finite();
  if (!entry) return std::nullopt;
  const Grid3& local = slab_.local;
  const std::size_t nx = local.n[0], plane = nx * local.n[1];
  const int i = static_cast<int>(entry->index % nx), j = static_cast<int>(entry->index / nx % local.n[1]);
  const int k = slab_.whole_plane(static_cast<int>(entry->index / plane));
  return NonFiniteSample{formula_.key(), slab_.whole.coord(0, i), slab_.whole.coord(1, j), slab_.whole.coord(2, k),
                         entry->t, entry->value};
}

template <class T>
std::array<double, 2> GridFormula<T>::range() const {
  std::array<double, 2> r = host_range_;
  if (device_ && keep_range_) {
    const std::array<double, 2> d = device_->range();
    r = {std::min(r[0], d[0]), std::max(r[1], d[1])};
  }
  return r;
}

template class GridFormula<float>;
template class GridFormula<double>;

}  // namespace adi3d::physics
