// NVRTC compilation of one expression into two kernels (grid and face sampling), loaded
// with the runtime's library API (cudaLibraryLoadData) so the binary needs no link to the
// driver library and still starts on machines without a GPU. The cubins are kept in the
// compile cache (compile_cache.hpp), so that a later run of the same formula skips NVRTC.
#include "solvers/rtc/device_function.hpp"

#include "solvers/backend.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/rtc/compile_cache.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace adi3d::rtc {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

void check_nvrtc(nvrtcResult status, const char* what) {
  if (status != NVRTC_SUCCESS)
    throw std::runtime_error(std::string("NVRTC error in ") + what + ": " + nvrtcGetErrorString(status));
}

// Each kernel writes its values and records the first non-finite one it meets in
// `non_finite` (index, then the time's and the value's bits): a compare-and-swap on a word
// that stays at kNoEntry while all is well, so the check costs no pass of its own, and
// samplings run in stream order, so the earliest bad sampling's node is the one kept.
std::string kernel_source(const std::string& expression, const char* real) {
  return std::string("typedef ") + real + R"( real;
__device__ void record_non_finite(unsigned long long* non_finite, size_t index, double t, real v) {
  if (isfinite(v)) return;
  if (atomicCAS(non_finite, ~0ull, (unsigned long long)index) == ~0ull) {
    non_finite[1] = (unsigned long long)__double_as_longlong(t);
    non_finite[2] = (unsigned long long)__double_as_longlong((double)v);
  }
}
extern "C" __global__ void sample_grid(real* out, int nx, int ny, int nz, double x0, double y0,
                                       double z0, double hx, double hy, double hz, double t,
                                       unsigned long long* non_finite) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nx) return;
  for (int k = blockIdx.z; k < nz; k += gridDim.z)
    for (int j = blockIdx.y; j < ny; j += gridDim.y) {
      // Rounded exactly like the host's lo + i*h (no FMA contraction), so a formula with a
      // discontinuity at a node picks the same side on both.
      const double x = __dadd_rn(x0, __dmul_rn(i, hx)), y = __dadd_rn(y0, __dmul_rn(j, hy)),
                   z = __dadd_rn(z0, __dmul_rn(k, hz));
      const size_t index = i + (size_t)nx * (j + (size_t)ny * k);
      const real v = (real)()" + expression + R"();
      out[index] = v;
      record_non_finite(non_finite, index, t, v);
    }
}
extern "C" __global__ void sample_face(real* out, int nu, int nv, int axis, int ua, int va,
                                       double normal, double u0, double hu, double v0, double hv,
                                       double t, unsigned long long* non_finite) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= nu) return;
  for (int b = blockIdx.y; b < nv; b += gridDim.y) {
    double p[3];
    p[axis] = normal;
    p[ua] = __dadd_rn(u0, __dmul_rn(a, hu));
    p[va] = __dadd_rn(v0, __dmul_rn(b, hv));
    const double x = p[0], y = p[1], z = p[2];
    const size_t index = a + (size_t)nu * b;
    const real v = (real)()" + expression + R"();
    out[index] = v;
    record_non_finite(non_finite, index, t, v);
  }
}
)";
}

// NVRTC's options besides the architecture. No FMA contraction: the host evaluates with
// separate roundings, and a formula with a discontinuity (rint, comparisons) must pick the
// same side at a node on both.
constexpr const char* kOptions[] = {"--std=c++17", "--fmad=false"};

// The cubin of `source` for `arch` by NVRTC; throws with NVRTC's log where it does not
// compile.
std::vector<char> compile(const std::string& source, const std::string& expression, const std::string& arch) {
  nvrtcProgram program{};
  check_nvrtc(nvrtcCreateProgram(&program, source.c_str(), "adi3d_formula.cu", 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  const char* options[] = {arch.c_str(), kOptions[0], kOptions[1]};
  static_assert(std::size(options) == std::size(kOptions) + 1, "every option after the architecture");
  const nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(std::size(options)), options);
  if (compiled != NVRTC_SUCCESS) {
    std::size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    throw std::runtime_error("the formula '" + expression + "' does not compile for the GPU: " + log);
  }
  std::size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check_nvrtc(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&program);
  return cubin;
}

// What decides the cubin besides the source: NVRTC's version and the options compile()
// passes.
std::string cache_key(const std::string& source, const std::string& arch) {
  int major = 0, minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion");
  std::string key = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " " + arch;
  for (const char* option : kOptions) key += std::string(" ") + option;
  return key + "\n" + source;
}

}  // namespace

bool available() { return cuda_device_count() > 0; }

template <class T>
struct DeviceFunction<T>::Module {
  cudaLibrary_t library{};
  cudaKernel_t grid_kernel{};
  cudaKernel_t face_kernel{};
  unsigned long long* non_finite = nullptr;  // device: index (kNoEntry: none), t, value
  ~Module() {
    if (non_finite) cudaFree(non_finite);
    if (library) cudaLibraryUnload(library);
  }
};

template <class T>
DeviceFunction<T>::DeviceFunction(const std::string& expression, int device) : module_(std::make_unique<Module>()) {
  if (!available()) throw BackendUnavailable("no CUDA device for run-time compiled formulas");
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  const std::string source = kernel_source(expression, sizeof(T) == 4 ? "float" : "double");
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  const CompileCache cache = CompileCache::from_environment();
  const std::string key = cache_key(source, arch);
  auto load = [&](const std::vector<char>& cubin) {
    return cudaLibraryLoadData(&module_->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  };
  // A cached cubin the driver refuses (one from another driver, say) is compiled anew.
  if (std::optional<std::vector<char>> cached = cache.load(key); cached && load(*cached) == cudaSuccess) {
    from_cache_ = true;
  } else {
    cudaGetLastError();  // a refused cached cubin's error is not this call's
    const std::vector<char> cubin = compile(source, expression, arch);
    check_cuda(load(cubin), "cudaLibraryLoadData");
    cache.store(key, cubin);
  }
  check_cuda(cudaLibraryGetKernel(&module_->grid_kernel, module_->library, "sample_grid"), "cudaLibraryGetKernel");
  check_cuda(cudaLibraryGetKernel(&module_->face_kernel, module_->library, "sample_face"), "cudaLibraryGetKernel");
  check_cuda(cudaMalloc(&module_->non_finite, 3 * sizeof(unsigned long long)), "cudaMalloc");
  check_cuda(cudaMemset(module_->non_finite, 0xff, sizeof(unsigned long long)), "cudaMemset");
}

template <class T>
DeviceFunction<T>::~DeviceFunction() = default;

template <class T>
void DeviceFunction<T>::sample_grid(const Grid3& g, double t, T* out, CUstream_st* stream) const {
  int nx = g.n[0], ny = g.n[1], nz = g.n[2];
  double x0 = g.lo[0], y0 = g.lo[1], z0 = g.lo[2], hx = g.h[0], hy = g.h[1], hz = g.h[2];
  unsigned long long* non_finite = module_->non_finite;
  void* args[] = {&out, &nx, &ny, &nz, &x0, &y0, &z0, &hx, &hy, &hz, &t, &non_finite};
  last_stream_ = stream;
  const dim3 block(128), grid((nx + 127) / 128, std::min(ny, 65535), std::min(nz, 65535));
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(module_->grid_kernel), grid, block, args, 0, stream),
             "launch sample_grid");
}

template <class T>
void DeviceFunction<T>::sample_face(const Grid3& g, int face, double t, T* out,
                                     CUstream_st* stream) const {
  const FaceAxes fa = face_axes(face);
  int nu = g.n[fa.u], nv = g.n[fa.v], axis = fa.axis, ua = fa.u, va = fa.v;
  double normal = g.coord(fa.axis, face % 2 == 0 ? 0 : g.n[fa.axis] - 1);
  double u0 = g.lo[fa.u], hu = g.h[fa.u], v0 = g.lo[fa.v], hv = g.h[fa.v];
  unsigned long long* non_finite = module_->non_finite;
  void* args[] = {&out, &nu, &nv, &axis, &ua, &va, &normal, &u0, &hu, &v0, &hv, &t, &non_finite};
  last_stream_ = stream;
  const dim3 block(128), grid((nu + 127) / 128, std::min(nv, 65535));
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(module_->face_kernel), grid, block, args, 0, stream),
             "launch sample_face");
}

template <class T>
std::optional<typename DeviceFunction<T>::NonFiniteEntry> DeviceFunction<T>::first_non_finite() const {
  unsigned long long words[3];
  check_cuda(cudaMemcpyAsync(words, module_->non_finite, sizeof words, cudaMemcpyDeviceToHost, last_stream_),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(last_stream_), "cudaStreamSynchronize");
  if (words[0] == ~0ull) return std::nullopt;
  NonFiniteEntry e;
  e.index = static_cast<std::size_t>(words[0]);
  std::memcpy(&e.t, &words[1], sizeof e.t);
  std::memcpy(&e.value, &words[2], sizeof e.value);
  return e;
}

template class DeviceFunction<float>;
template class DeviceFunction<double>;

}  // namespace adi3d::rtc
