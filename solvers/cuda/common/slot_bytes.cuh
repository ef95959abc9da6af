#pragma once
// Material bytes from a row of shared memory by 4-byte words (the one-kernel variable x
// pass, fused_step_var_x_kernel.cuh, and the plain x solve by index, x_line_var_kernel.cuh).
// Internal to the CUDA backend.
#include "solvers/material_index.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace adi3d::cuda::fused {

// N consecutive material bytes of a row in shared memory from p on, by the aligned 4-byte
// words that hold them (a lane's bytes start anywhere in a word) shifted into place:
// bytes[b] is byte b of word b / 4. It reads kWords + 1 words from p rounded down to a
// word, so the row needs that much room past its last byte read. One shared load per 4
// bytes instead of per byte (in the variable x pass the byte loads were a third of the
// shared loads, which bound it: ncu, MIO throttle).
template <int N>
struct SlotBytes {
  static constexpr int kWords = (N + 3) / 4;
  unsigned w[kWords];

  __device__ __forceinline__ explicit SlotBytes(const unsigned char* p) {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    const unsigned* aligned = reinterpret_cast<const unsigned*>(addr & ~std::uintptr_t(3));
    const unsigned shift = 8u * static_cast<unsigned>(addr & 3);
    unsigned raw[kWords + 1];
#pragma unroll
    for (int i = 0; i <= kWords; ++i) raw[i] = aligned[i];
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = __funnelshift_r(raw[i], raw[i + 1], shift);
  }
  // The material of byte b. Bytes past the line (the padding rows of the last lanes: the
  // next row's, or zeros) are masked into kMaxMaterials^2 values of a table's room (what
  // they look up is dropped with the padding rows).
  __device__ __forceinline__ int operator[](int b) const {
    return static_cast<int>((w[b >> 2] >> (8 * (b & 3))) & (kMaxMaterials - 1));
  }
};

}  // namespace adi3d::cuda::fused
