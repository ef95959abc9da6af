// The material index of an alpha field built on the device (solvers/material_index.hpp), so
// that a field sampled on the GPU never comes to the host: the field's distinct values into
// a table of a few slots by compare-and-swap (a node only reads the table where its value is
// already in it, and not even that where it repeats the thread's last value; a thread stops
// once it finds the table full), then every node's byte. Reads the field twice and writes a
// byte per node, once per stepper.
#include "solvers/cuda/backend/cuda_backend.cuh"
#include "solvers/cuda/backend/cuda_check.hpp"
#include "solvers/material_index.hpp"

#include <algorithm>
#include <cstring>

namespace adi3d::cuda {
namespace {

constexpr int kThreads = 256;
// An empty slot: the bits of no float (widened) and of no finite double.
constexpr unsigned long long kEmptySlot = ~0ull;

template <class T>
__device__ unsigned long long value_bits(T v) {
  if constexpr (sizeof(T) == 4) return static_cast<unsigned>(__float_as_uint(v));
  else return static_cast<unsigned long long>(__double_as_longlong(v));
}

// Every distinct value of alpha into slots[0..slot_count): the first slot that is empty or
// holds it. Slots only ever go from empty to a value, so a stale read of one is at worst
// empty, which the compare-and-swap then corrects. Values beyond slot_count find no slot:
// the last slot filled says there were at least that many.
template <class T>
__global__ void collect_values_kernel(const T* __restrict__ alpha, std::size_t n, unsigned long long* slots,
                                      int slot_count) {
  unsigned long long last = kEmptySlot;
  for (std::size_t p = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; p < n; p += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned long long key = value_bits(alpha[p]);
    if (key == last) continue;
    last = key;
    int s = 0;
    for (; s < slot_count; ++s) {
      unsigned long long seen = __ldcg(slots + s);
      if (seen == kEmptySlot) {
        seen = atomicCAS(slots + s, kEmptySlot, key);
        if (seen == kEmptySlot) break;  // it is this value's slot now
      }
      if (seen == key) break;
    }
    // Every slot holds another value: the field has more values than the table takes, and
    // no node can change that answer. (Scanning on cost a field of distinct values a pass
    // of slot_count L2 reads a node: 3.6 ms of a 257^3 float solve's set-up on an H200.)
    if (s == slot_count) return;
  }
}

// index[r pitch + i] = the slot of alpha[r nx + i], a block per row at a time.
template <class T>
__global__ void write_index_kernel(const T* __restrict__ alpha, int nx, std::size_t rows, int pitch,
                                   const unsigned long long* __restrict__ slots, int count,
                                   std::uint8_t* __restrict__ index) {
  __shared__ unsigned long long table[kMaxMaterials];
  if (threadIdx.x < count) table[threadIdx.x] = slots[threadIdx.x];
  __syncthreads();
  for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (int i = threadIdx.x; i < nx; i += blockDim.x) {
      const unsigned long long key = value_bits(alpha[r * nx + i]);
      int m = 0;
      for (int s = 1; s < count; ++s) m = table[s] == key ? s : m;
      index[r * pitch + i] = static_cast<std::uint8_t>(m);
    }
}

}  // namespace

template <class T>
std::vector<T> launch_collect_values(const T* alpha, std::size_t n, int slot_count, cudaStream_t s) {
  Array<unsigned long long> slots = device_allocate<unsigned long long>(slot_count);
  ADI3D_CUDA_CHECK(cudaMemsetAsync(slots.data(), 0xff, slot_count * sizeof(unsigned long long), s));
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 4096));
  collect_values_kernel<T><<<std::max(blocks, 1u), kThreads, 0, s>>>(alpha, n, slots.data(), slot_count);
  ADI3D_CUDA_LAUNCH_CHECK();
  std::vector<unsigned long long> host(slot_count);
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(host.data(), slots.data(), host.size() * sizeof host[0], cudaMemcpyDeviceToHost, s));
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<T> values;
  for (unsigned long long key : host) {
    if (key == kEmptySlot) break;  // slots fill in order
    T v;
    if constexpr (sizeof(T) == 4) {
      const unsigned bits = static_cast<unsigned>(key);
      std::memcpy(&v, &bits, sizeof v);
    } else {
      std::memcpy(&v, &key, sizeof v);
    }
    values.push_back(v);
  }
  return values;
}

template <class T>
Array<std::uint8_t> launch_material_index(const T* alpha, const std::array<int, 3>& n, int pitch,
                                          const std::vector<T>& values, cudaStream_t s) {
  const std::size_t rows = static_cast<std::size_t>(n[1]) * n[2];
  Array<std::uint8_t> index = device_allocate<std::uint8_t>(rows * pitch);
  if (rows == 0) return index;
  std::vector<unsigned long long> keys(values.size());
  for (std::size_t m = 0; m < values.size(); ++m) {
    if constexpr (sizeof(T) == 4) {
      unsigned bits = 0;
      std::memcpy(&bits, &values[m], sizeof bits);
      keys[m] = bits;
    } else {
      std::memcpy(&keys[m], &values[m], sizeof keys[m]);
    }
  }
  Array<unsigned long long> table = device_allocate<unsigned long long>(keys.size());
  ADI3D_CUDA_CHECK(cudaMemcpyAsync(table.data(), keys.data(), keys.size() * sizeof keys[0], cudaMemcpyHostToDevice, s));
  ADI3D_CUDA_CHECK(cudaMemsetAsync(index.data(), 0, index.size(), s));  // the rows' padding
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(rows, 65535));
  write_index_kernel<T><<<blocks, kThreads, 0, s>>>(alpha, n[0], rows, pitch, table.data(),
                                                    static_cast<int>(keys.size()), index.data());
  ADI3D_CUDA_LAUNCH_CHECK();
  // The table's memory goes with this call: the kernel must have read it.
  ADI3D_CUDA_CHECK(cudaStreamSynchronize(s));
  return index;
}

template std::vector<float> launch_collect_values(const float*, std::size_t, int, cudaStream_t);
template std::vector<double> launch_collect_values(const double*, std::size_t, int, cudaStream_t);
template Array<std::uint8_t> launch_material_index(const float*, const std::array<int, 3>&, int,
                                                   const std::vector<float>&, cudaStream_t);
template Array<std::uint8_t> launch_material_index(const double*, const std::array<int, 3>&, int,
                                                   const std::vector<double>&, cudaStream_t);

}  // namespace adi3d::cuda
