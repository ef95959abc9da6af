#pragma once
// A function f(x, y, z, t), given as C++ expression text over doubles, compiled at run time
// for the current CUDA device (NVRTC) and sampled on grid nodes or face nodes straight into
// device memory. It lets time-dependent sources and boundary data be evaluated on the GPU
// every step instead of on the host. No CUDA headers here: callers above solvers/ include it.
#include "solvers/distributed/slab_decomposition.hpp"
#include "solvers/grid.hpp"

struct CUstream_st;  // cudaStream_t

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace adi3d::rtc {

// False when the binary has no CUDA support or no device is present.
bool available();

template <class T>
class DeviceFunction {
 public:
  // Compiles `expression` for `device`, or loads what an earlier run compiled from the
  // compile cache (compile_cache.hpp: CompileCache::from_environment); throws
  // std::runtime_error with NVRTC's log when the expression does not compile,
  // BackendUnavailable without CUDA.
  DeviceFunction(const std::string& expression, int device);
  ~DeviceFunction();
  DeviceFunction(const DeviceFunction&) = delete;
  DeviceFunction& operator=(const DeviceFunction&) = delete;

  // out (device memory, x fastest) = f at every node, at time t; queued on `stream`.
  void sample_grid(const Grid3& grid, double t, T* out, CUstream_st* stream) const;
  // The same over a rank's slab (ghost planes included): local plane k at the whole grid's
  // plane slab.whole_plane(k), its coordinates rounded as the whole grid's, so that every
  // split samples the nodes of one rank alike. With `minuend` (device memory, the slab's
  // size), out = minuend - f instead, in double and rounded once to T: a field's error
  // against an exact solution in one pass (the record below still watches f in T). With
  // `record_range`, the smallest and largest finite values of f are kept (range()).
  void sample_slab(const SlabDecomposition& slab, double t, T* out, CUstream_st* stream,
                   const T* minuend = nullptr, bool record_range = false) const;
  // out (device memory, face layout of face_layout.hpp) = f on one face; queued on `stream`.
  void sample_face(const Grid3& grid, int face, double t, T* out, CUstream_st* stream) const;

  // The first sample, over every sampling so far, whose value was not finite in T: its
  // index in the array sampled (grid or face layout), the time and the value. The sampling
  // kernels record it as they write (no pass of its own); reading it back waits for the
  // stream of the last sampling, so callers ask at their checks, not after every sampling.
  struct NonFiniteEntry {
    std::size_t index = 0;
    double t = 0;
    double value = 0;
  };
  std::optional<NonFiniteEntry> first_non_finite() const;
  // The smallest and largest finite values of the samplings that recorded them
  // ({inf, -inf} before any); reading waits for the stream, as first_non_finite().
  std::array<double, 2> range() const;

  // Whether its code came from a cache rather than from NVRTC: the compile cache, or a
  // library of the same code that a function alive in this process had loaded.
  bool from_cache() const { return from_cache_; }

 private:
  struct Module;
  std::unique_ptr<Module> module_;
  bool from_cache_ = false;
  mutable CUstream_st* last_stream_ = nullptr;
};

}  // namespace adi3d::rtc
