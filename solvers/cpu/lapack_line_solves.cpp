#include "solvers/cpu/lapack_line_solves.hpp"

#include "solvers/cpu/cpu_backend.hpp"
#include "solvers/discretization.hpp"

#include <stdexcept>
#include <string>
#include <vector>

extern "C" void dgtsv_(const int* n, const int* nrhs, double* dl, double* d, double* du, double* b,
                       const int* ldb, int* info);

namespace adi3d::cpu {
namespace {

class LapackLineBackend final : public CpuBackend<double> {
 public:
  std::string description() const override { return CpuBackend<double>::description() + ", LAPACK dgtsv lines"; }

  void solve_lines(const OperatorView<double>& op, int axis, double tau, double* d) override {
    if (op.lo[axis] == BoundaryKind::periodic)
      throw std::invalid_argument("dgtsv line solves cannot handle periodic axes");
    const int n = op.n[axis];
    const std::size_t stride = axis == 0 ? 1 : axis == 1 ? static_cast<std::size_t>(op.n[0])
                                                         : static_cast<std::size_t>(op.n[0]) * op.n[1];
    const int u_axis = axis == 0 ? 1 : 0, v_axis = axis == 2 ? 1 : 2;
    const int nu = op.n[u_axis], nv = op.n[v_axis];
    const std::size_t su = u_axis == 0 ? 1 : static_cast<std::size_t>(op.n[0]);
    const std::size_t sv = v_axis == 1 ? static_cast<std::size_t>(op.n[0]) : static_cast<std::size_t>(op.n[0]) * op.n[1];
    int failures = 0;
#pragma omp parallel reduction(+ : failures)
    {
      std::vector<double> dl(n), dd(n), du(n), b(n);
#pragma omp for collapse(2) schedule(static)
      for (int v = 0; v < nv; ++v)
        for (int u = 0; u < nu; ++u) {
          const std::size_t origin = u * su + v * sv;
          for (int m = 0; m < n; ++m) {
            const std::size_t p = origin + m * stride;
            const TriRow<double> row = implicit_row(axis_row(op, axis, m, p, stride), tau);
            if (m > 0) dl[m - 1] = row.a;
            dd[m] = row.b;
            if (m + 1 < n) du[m] = row.c;
            b[m] = d[p];
          }
          const int one = 1;
          int info = 0;
          dgtsv_(&n, &one, dl.data(), dd.data(), du.data(), b.data(), &n, &info);
          failures += info != 0;
          for (int m = 0; m < n; ++m) d[origin + m * stride] = b[m];
        }
    }
    if (failures) throw std::runtime_error("dgtsv reported a singular line system");
  }
};

}  // namespace

std::unique_ptr<Backend<double>> make_lapack_line_backend() { return std::make_unique<LapackLineBackend>(); }

}  // namespace adi3d::cpu
