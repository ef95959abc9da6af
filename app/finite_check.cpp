#include "app/finite_check.hpp"

#include "app/rank_agreement.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace adi3d::app {
namespace {

// The first owned node of u that is not finite, as a message: whole-grid indices and
// coordinates. Only after the norms said there is one: it downloads the rank's slab.
template <class T>
std::string first_bad_node(const ProblemSetup<T>& problem, Backend<T>& backend, const T* u) {
  const SlabDecomposition& slab = problem.diffusion.slab;
  std::vector<T> owned(slab.owned_size());
  backend.download(u + slab.owned_offset(), owned.data(), owned.size());
  const Grid3& whole = problem.diffusion.whole_grid();
  const std::size_t nx = whole.n[0], plane = slab.plane();
  for (std::size_t p = 0; p < owned.size(); ++p) {
    if (std::isfinite(owned[p])) continue;
    const int i = static_cast<int>(p % nx), j = static_cast<int>(p % plane / nx);
    const int k = slab.k_begin + static_cast<int>(p / plane);
    return fmt::format("u = {} at node (i, j, k) = ({}, {}, {}), (x, y, z) = ({:.6g}, {:.6g}, {:.6g})",
                       static_cast<double>(owned[p]), i, j, k, whole.coord(0, i), whole.coord(1, j), whole.coord(2, k));
  }
  return "";
}

}  // namespace

std::optional<physics::NonFiniteSample> agree_on_sample(const std::optional<physics::NonFiniteSample>& local,
                                                         Communicator* comm) {
  comm = ranks_of(comm);
  if (!comm) return local;
  const int root = lowest_rank_with(local.has_value(), comm);
  if (root < 0) return std::nullopt;
  physics::NonFiniteSample s = local.value_or(physics::NonFiniteSample{});
  double numbers[5] = {s.x, s.y, s.z, s.t, s.value};
  comm->broadcast(numbers, sizeof numbers, root);
  broadcast_string(s.key, root, comm);
  return physics::NonFiniteSample{s.key, numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]};
}

void require_finite_sampling(const std::optional<physics::NonFiniteSample>& sample, Communicator* comm) {
  if (const auto s = agree_on_sample(sample, comm)) throw physics::NonFiniteFormula(*s);
}

template <class T>
void require_finite_run(const ProblemSetup<T>& problem, Backend<T>& backend, const T* u, const std::string& when) {
  Communicator* comm = ranks_of(problem.distributed() ? problem.comm : nullptr);
  // Bad data first: a field gone NaN because of it is the deck's fault, not the scheme's.
  if (const auto s = agree_on_sample(problem.forcing->first_non_finite(), comm)) throw physics::NonFiniteFormula(*s);
  const Norms norms = backend.difference_norms(u, nullptr, problem.diffusion.grid.size());
  if (std::isfinite(norms.max_abs)) return;
  std::string node = first_bad_node(problem, backend, u);
  if (comm) {
    const int root = lowest_rank_with(!node.empty(), comm);
    if (root >= 0) broadcast_string(node, root, comm);
  }
  // The data were finite and the scheme is unconditionally stable (theta >= 1/2), so the
  // values outgrew the precision: the advice is about scales.
  throw FieldNotFinite(fmt::format("the field is no longer finite {}: {}; the data are finite, so the solution "
                                   "outgrew the range of {}: check the scale of the data, time.dt and "
                                   "material.diffusivity. The outputs written before are kept",
                                   when, node, sizeof(T) == 4 ? "float" : "double"));
}

template void require_finite_run(const ProblemSetup<float>&, Backend<float>&, const float*, const std::string&);
template void require_finite_run(const ProblemSetup<double>&, Backend<double>&, const double*, const std::string&);

}  // namespace adi3d::app
