#pragma once
// The CPU's direct solve (spectral_solve.hpp): FFTW's real transforms over each z plane,
// Thomas along z for every mode.
#include "solvers/operator_view.hpp"
#include "solvers/spectral_solve.hpp"

#include <memory>

namespace adi3d::cpu {

template <class T>
std::unique_ptr<SpectralSolve<T>> make_cpu_spectral_solve(const OperatorView<T>& op, const SpectralLayers<T>& layers);

}  // namespace adi3d::cpu
