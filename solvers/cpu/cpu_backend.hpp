#pragma once
// The CPU backend: OpenMP across lines and planes, vectorised inner loops.
#include "solvers/backend.hpp"
#include "solvers/discretization.hpp"
#include "solvers/cpu/line_factors.hpp"

#include <deque>

namespace adi3d::cpu {

template <class T>
class CpuBackend : public Backend<T> {
 public:
  BackendKind kind() const override { return BackendKind::cpu; }
  std::string description() const override;

  Array<T> allocate(std::size_t n) override;
  void upload(const T* host, T* dst, std::size_t n) override;
  void download(const T* src, T* host, std::size_t n) override;
  void fill(T* x, T value, std::size_t n) override;
  void add_constant(T* x, double value, std::size_t n) override;
  void operator_rhs(const OperatorView<T>& op, const T* u, const T* f, const FaceData<T>& neumann,
                    T scale, T* r) override;
  void fold_neumann_terms(const OperatorView<T>& op, const FaceData<T>& neumann, const T* base, T* f) override;
  void robin_data(const OperatorView<T>& op, int face, const T* u_inf, const T* u, T* g) override;
  void solve_lines(const OperatorView<T>& op, int axis, T tau, T* d) override;
  void set_face(const Grid3& grid, int face, const T* values, T* field) override;
  void scale_face(const Grid3& grid, int face, T factor, T* field) override;
  void face_tangential_factor(const OperatorView<T>& op, int face, int axis, T tau, const T* in,
                              T* out) override;
  void axpy(T a, const T* x, T* y, std::size_t n) override;
  void axpby_converted(double a, const OtherPrecision<T>* x, double b, T* y, std::size_t n) override;
  void add_coupling_terms(const T* y, const T* v, const T* a, const T* w, const T* b, bool per_node, T* x,
                          std::size_t plane, std::size_t planes) override;
  void copy(const T* src, T* dst, std::size_t n) override;
  void multiply(const T* s, T* x, std::size_t n) override;
  void layer_scaling(const T* alpha, const std::vector<T>& layer_alpha, std::size_t plane, T* s) override;
  double in_plane_jump(const T* alpha, const std::array<int, 3>& n) override;
  void solve_reduced_lines(const ReducedLines& lines, const T* messages, T* x_below, T* x_above) override {
    solve_reduced_systems(lines, messages, x_below, x_above);
  }
  Norms difference_norms(const T* x, const T* y, std::size_t n) override;
  double dot(const T* x, const T* y, std::size_t n) override;
  void synchronize() override {}
  std::unique_ptr<SpectralSolve<T>> make_spectral_solve(const OperatorView<T>& op,
                                                        const SpectralLayers<T>& layers) override;

 private:
  // Factors of constant-coefficient line systems, reused across steps (tau is fixed in a
  // heat run and cycles through a few values in a Poisson solve).
  const LineFactors<T>& factors(const OperatorView<T>& op, int axis, T tau);
  void solve_lines_constant(const OperatorView<T>& op, int axis, T tau, T* d);
  void solve_lines_general(const OperatorView<T>& op, int axis, T tau, T* d);

  struct FactorEntry {
    int axis;
    LineMatrixKey<T> key;
    T tau;
    LineFactors<T> factors;
  };
  std::deque<FactorEntry> factor_cache_;
};

}  // namespace adi3d::cpu
