#pragma once
// What the CUDA direct solves' z solves read of the operator (spectral_modes.hpp's
// SpectralSystems), the z rows in device memory.
#include "solvers/backend.hpp"
#include "solvers/spectral_modes.hpp"

namespace adi3d::cuda {

template <class T>
struct DeviceSpectralSystems {
  DeviceSpectralSystems(const OperatorView<T>& op, const SpectralLayers<T>& layers, Backend<T>& backend) {
    const SpectralSystems<T> s = spectral_systems(op, layers.alpha.empty() ? nullptr : layers.alpha.data());
    g = s.g;
    wx = s.wx;
    wy = s.wy;
    rows = backend.allocate(s.rows.size());
    backend.upload(s.rows.data(), rows.data(), s.rows.size());
  }
  SpectralGeometry g;
  double wx, wy;
  Array<T> rows;
};

}  // namespace adi3d::cuda
