#pragma once
// A reference point for the CPU line solves: the same backend, but each line solved by
// LAPACK's dgtsv (Gaussian elimination with partial pivoting), the way a hand-written
// solver would. Benchmarks only; Dirichlet and Neumann axes (dgtsv has no cyclic form).
#include "solvers/backend.hpp"

#include <memory>

namespace adi3d::cpu {

std::unique_ptr<Backend<double>> make_lapack_line_backend();

}  // namespace adi3d::cpu
