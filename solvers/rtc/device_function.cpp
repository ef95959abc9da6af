// NVRTC compilation of one expression into two kernels (grid and face sampling:
// kernel_source.hpp), loaded with the runtime's library API (cudaLibraryLoadData) so the
// binary needs no link to the driver library and still starts on machines without a GPU.
// The cubins are kept in the compile cache (compile_cache.hpp), so that a later run of the
// same formula skips NVRTC, and a loaded library serves every function of the same code in
// the process (a deck's six faces of "0" load one).
#include "solvers/rtc/device_function.hpp"

#include "solvers/backend.hpp"
#include "solvers/face_layout.hpp"
#include "solvers/rtc/compile_cache.hpp"
#include "solvers/rtc/kernel_source.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
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

// A loaded cubin and its kernels, shared by the functions of the same code.
struct Library {
  cudaLibrary_t library{};
  cudaKernel_t grid_kernel{};
  cudaKernel_t face_kernel{};
  ~Library() {
    if (library) cudaLibraryUnload(library);
  }
};

// The library of `source` for `arch`: one already loaded in this process (while a function
// holds it), else the compile cache's cubin, else NVRTC's (then stored in the cache);
// `compiled` says whether NVRTC ran. Libraries loaded with cudaLibraryLoadData belong to no
// context, so one serves every device of the architecture.
std::shared_ptr<const Library> load_library(const std::string& source, const std::string& expression,
                                            const std::string& arch, bool& compiled) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const Library>> loaded;
  const std::string key = cache_key(source, arch);
  const std::lock_guard<std::mutex> lock(mutex);
  compiled = false;
  if (std::shared_ptr<const Library> found = loaded[key].lock()) return found;
  auto lib = std::make_shared<Library>();
  const CompileCache cache = CompileCache::from_environment();
  auto load = [&](const std::vector<char>& cubin) {
    return cudaLibraryLoadData(&lib->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  };
  // A cached cubin the driver refuses (one from another driver, say) is compiled anew.
  if (std::optional<std::vector<char>> cached = cache.load(key); !cached || load(*cached) != cudaSuccess) {
    cudaGetLastError();  // a refused cached cubin's error is not this call's
    compiled = true;
    const std::vector<char> cubin = compile(source, expression, arch);
    check_cuda(load(cubin), "cudaLibraryLoadData");
    cache.store(key, cubin);
  }
  check_cuda(cudaLibraryGetKernel(&lib->grid_kernel, lib->library, "sample_grid"), "cudaLibraryGetKernel");
  check_cuda(cudaLibraryGetKernel(&lib->face_kernel, lib->library, "sample_face"), "cudaLibraryGetKernel");
  loaded[key] = lib;
  return lib;
}

// Words of a function's record in device memory: the first non-finite value (index, t and
// value; index ~0 while there is none), then the range's two keys.
constexpr int kRecordWords = 5;
constexpr unsigned long long kEmptyRecord[kRecordWords] = {~0ull, 0, 0, ~0ull, 0};

}  // namespace

bool available() { return cuda_device_count() > 0; }

template <class T>
struct DeviceFunction<T>::Module {
  std::shared_ptr<const Library> library;
  unsigned long long* record = nullptr;  // device: kRecordWords
  ~Module() {
    if (record) cudaFree(record);
  }
};

template <class T>
DeviceFunction<T>::DeviceFunction(const std::string& expression, int device) : module_(std::make_unique<Module>()) {
  if (!available()) throw BackendUnavailable("no CUDA device for run-time compiled formulas");
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  const std::string source = formula_kernels(expression, sizeof(T) == 4 ? "float" : "double");
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  bool compiled = false;
  module_->library = load_library(source, expression, arch, compiled);
  from_cache_ = !compiled;
  check_cuda(cudaMalloc(&module_->record, sizeof kEmptyRecord), "cudaMalloc");
  check_cuda(cudaMemcpy(module_->record, kEmptyRecord, sizeof kEmptyRecord, cudaMemcpyHostToDevice), "cudaMemcpy");
}

template <class T>
DeviceFunction<T>::~DeviceFunction() = default;

namespace {

// One launch of sample_grid over nz planes of an array, plane k at the coordinates of the
// plane (k + k_first) mod period of `coords`.
template <class T>
void launch_grid(cudaKernel_t kernel, const Grid3& coords, int nz, int k_first, double t, T* out, const T* minuend,
                 unsigned long long* record, bool record_range, cudaStream_t stream) {
  int nx = coords.n[0], ny = coords.n[1], period = coords.n[2];
  double x0 = coords.lo[0], y0 = coords.lo[1], z0 = coords.lo[2], hx = coords.h[0], hy = coords.h[1],
         hz = coords.h[2];
  unsigned long long* range = record_range ? record + 3 : nullptr;
  void* args[] = {&out, &minuend, &nx, &ny, &nz, &x0, &y0, &z0, &hx, &hy, &hz, &k_first, &period, &t, &record, &range};
  // A row per block; where the range is kept, 64 x 64 rows a block at most, so that few of
  // its atomics (one per warp) meet on its two words.
  const int rows = record_range ? 64 : 65535;
  const dim3 block(128), grid((nx + 127) / 128, std::min(ny, rows), std::min(nz, rows));
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, 0, stream),
             "launch sample_grid");
}

}  // namespace

template <class T>
void DeviceFunction<T>::sample_grid(const Grid3& g, double t, T* out, CUstream_st* stream) const {
  last_stream_ = stream;
  launch_grid<T>(module_->library->grid_kernel, g, g.n[2], 0, t, out, nullptr, module_->record, false, stream);
}

template <class T>
void DeviceFunction<T>::sample_slab(const SlabDecomposition& slab, double t, T* out, CUstream_st* stream,
                                    const T* minuend, bool record_range) const {
  last_stream_ = stream;
  launch_grid<T>(module_->library->grid_kernel, slab.whole, slab.local.n[2], slab.k_begin - slab.ghost_lo, t, out,
                 minuend, module_->record, record_range, stream);
}

template <class T>
void DeviceFunction<T>::sample_face(const Grid3& g, int face, double t, T* out,
                                     CUstream_st* stream) const {
  const FaceAxes fa = face_axes(face);
  int nu = g.n[fa.u], nv = g.n[fa.v], axis = fa.axis, ua = fa.u, va = fa.v;
  double normal = g.coord(fa.axis, face % 2 == 0 ? 0 : g.n[fa.axis] - 1);
  double u0 = g.lo[fa.u], hu = g.h[fa.u], v0 = g.lo[fa.v], hv = g.h[fa.v];
  unsigned long long* non_finite = module_->record;
  void* args[] = {&out, &nu, &nv, &axis, &ua, &va, &normal, &u0, &hu, &v0, &hv, &t, &non_finite};
  last_stream_ = stream;
  const dim3 block(128), grid((nu + 127) / 128, std::min(nv, 65535));
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(module_->library->face_kernel), grid, block, args, 0,
                              stream),
             "launch sample_face");
}

namespace {

// The record's words, once the stream of the last sampling is done.
std::array<unsigned long long, kRecordWords> read_record(const unsigned long long* record, cudaStream_t stream) {
  std::array<unsigned long long, kRecordWords> words{};
  check_cuda(cudaMemcpyAsync(words.data(), record, sizeof kEmptyRecord, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return words;
}

}  // namespace

template <class T>
std::optional<typename DeviceFunction<T>::NonFiniteEntry> DeviceFunction<T>::first_non_finite() const {
  const auto words = read_record(module_->record, last_stream_);
  if (words[0] == ~0ull) return std::nullopt;
  NonFiniteEntry e;
  e.index = static_cast<std::size_t>(words[0]);
  std::memcpy(&e.t, &words[1], sizeof e.t);
  std::memcpy(&e.value, &words[2], sizeof e.value);
  return e;
}

template <class T>
std::array<double, 2> DeviceFunction<T>::range() const {
  const auto words = read_record(module_->record, last_stream_);
  if (words[3] == kEmptyRecord[3] && words[4] == kEmptyRecord[4]) return {INFINITY, -INFINITY};
  return {range_value(words[3]), range_value(words[4])};
}

template class DeviceFunction<float>;
template class DeviceFunction<double>;

}  // namespace adi3d::rtc
