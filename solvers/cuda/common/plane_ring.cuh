#pragma once
// A ring of NS plane slots in shared memory, filled by one producer lane with sm_90 bulk
// copies (async_copy.cuh), for kernels that march along z through a slab of rows: slot s
// holds `rows` rows of one z-plane of a grid array, `stride` values apart. Consumer warps
// wait for a plane (its full barrier: the bytes delivered) and release it when they are
// done with it (its empty barrier: one arrival per consumer lane); the producer refills a
// slot as soon as every consumer has released it. No block barrier ties the consumers
// together plane by plane, and a 7-point stencil that reads planes k-1, k and k+1 has
// NS - 3 planes in flight beyond them.
// Used by the bulk x pass of the fused step and the plane-streaming stencil.
// With one arrival per warp (lane 0, after a __syncwarp) compute-sanitizer's racecheck
// reported hazards between the bulk loads and the other lanes' slot reads in the double
// kernels: an arrival releases only the arriving thread's accesses. One arrival per lane
// made the planes stencil's double test clean (H100, CUDA 13).
#include "solvers/cuda/common/async_copy.cuh"

#include <cstddef>

namespace adi3d::cuda {

// Node m of an axis of n nodes, or for m = -1 and m = n the node it mirrors across the
// face: a Neumann face's ghost node, u_{-1} = u_1 under zero flux (the half-cell balance of
// discretization.hpp, with constant alpha).
__host__ __device__ __forceinline__ int mirror_node(int m, int n) {
  return m < 0 ? -m : m >= n ? 2 * (n - 1) - m : m;
}
// The same, or on a periodic axis the node at the other end: u_{-1} = u_{n-1}, u_n = u_0.
__host__ __device__ __forceinline__ int ghost_node(int m, int n, bool periodic) {
  if (periodic) return m < 0 ? m + n : m >= n ? m - n : m;
  return mirror_node(m, n);
}

template <class T, int NS>
struct PlaneRing {
  T* slots;                   // NS slots of rows * stride values
  unsigned long long* full;   // NS barriers
  unsigned long long* empty;  // NS barriers
  int rows, stride;
  int first;  // the first plane streamed goes to slot 0

  __device__ int slot_of(int p) const { return (p - first) % NS; }
  // Phase parity of plane p's use of its slot (the n-th use has parity n & 1).
  __device__ unsigned parity_of(int p) const { return static_cast<unsigned>((p - first) / NS) & 1u; }
  __device__ const T* plane(int p) const { return slots + static_cast<std::size_t>(slot_of(p)) * rows * stride; }

  // Every thread of the block, before anything uses the ring (consumer_warps warps will
  // release each plane); a block barrier must follow.
  __device__ void init(int consumer_warps) const {
    if (threadIdx.x < NS) {
      mbarrier_init(full + threadIdx.x, 1);
      mbarrier_init(empty + threadIdx.x, static_cast<unsigned>(32 * consumer_warps));
      mbarrier_init_fence();
    }
  }
  __device__ void wait(int p) const { mbarrier_wait(full + slot_of(p), parity_of(p)); }
  // Every lane of a consumer warp after its last read of plane p. Each lane arrives itself:
  // an arrival releases the arriving thread's own accesses, and the proxy fence orders
  // them before the bulk copies that will overwrite the slot.
  __device__ void release(int p) const {
    fence_proxy_async();
    mbarrier_arrive(empty + slot_of(p));
  }

  // The producer lane: planes begin..last of a grid array, plane p's first row at
  // src + p plane_stride, its rows row_stride apart, row_bytes each (16-byte units,
  // 16-byte aligned); count <= rows rows per plane (the slab's rows inside the grid; the
  // others keep what the kernel put there). begin is first, or, for a ring that goes on
  // from the planes of an earlier slab (first set back by as many), the slab's first plane.
  __device__ void produce(const T* src, std::size_t plane_stride, std::size_t row_stride, unsigned row_bytes,
                          int count, int last) const {
    produce(src, plane_stride, row_stride, row_bytes, count, first, last);
  }
  __device__ void produce(const T* src, std::size_t plane_stride, std::size_t row_stride, unsigned row_bytes,
                          int count, int begin, int last) const {
    produce_rows(begin, last, count, row_bytes,
                 [&](int p, int r) { return src + plane_stride * p + static_cast<std::size_t>(r) * row_stride; });
  }
  // The producer lane: planes first..last of a grid array (nz planes of ny rows of nx
  // values, plane_stride = nx ny), `count` rows per plane from row row0 on, where a row or
  // plane one past the grid (-1, ny or nz) is a ghost: the node whose value it takes
  // (ghost_node: the mirror across a Neumann face, the other end of a periodic axis) is
  // streamed in its place. Rows 1..column_rows (those of a periodic x axis's lines) take
  // their first 16 bytes again after their nx values: node 0 as the right neighbour of
  // node nx-1, where the stencil reads it without a test (nx values in 16-byte units, a
  // slot's rows at least 16 bytes longer).
  // (kGhostColumns: kernels of their own; the loop below took the Neumann x passes' of 512
  // floats from 8 to 20 bytes of spills. The rows' source is spelled out in both: one
  // lambda for the two took the float periodic pass with a source from 52 to 64 bytes.)
  template <bool kGhostColumns = false>
  __device__ void produce_with_ghosts(const T* grid, std::size_t plane_stride, int nx, unsigned row_bytes, int row0,
                                      int count, int ny, int nz, bool periodic_y, bool periodic_z, int last,
                                      int column_rows = 0) const {
    if constexpr (!kGhostColumns) {
      produce_rows(first, last, count, row_bytes, [&](int p, int r) {
        return grid + plane_stride * ghost_node(p, nz, periodic_z) +
               static_cast<std::size_t>(ghost_node(row0 + r, ny, periodic_y)) * nx;
      });
      return;
    }
    column_rows = column_rows < count - 1 ? column_rows : count - 1;
    for (int p = first; p <= last; ++p) {
      const int slot = claim(p, count * row_bytes + 16u * column_rows);
      T* dst = slots + static_cast<std::size_t>(slot) * rows * stride;
      const T* plane = grid + plane_stride * ghost_node(p, nz, periodic_z);
      for (int r = 0; r < count; ++r) {
        const T* src = plane + static_cast<std::size_t>(ghost_node(row0 + r, ny, periodic_y)) * nx;
        T* row = dst + static_cast<std::size_t>(r) * stride;
        bulk_load(row, src, row_bytes, full + slot);
        if (r >= 1 && r <= column_rows) bulk_load(row + nx, src, 16u, full + slot);
      }
    }
  }
  // Planes begin..last, count rows each, row r of plane p from row_src(p, r).
  template <class RowSource>
  __device__ void produce_rows(int begin, int last, int count, unsigned row_bytes, const RowSource& row_src) const {
    for (int p = begin; p <= last; ++p) {
      const int slot = claim(p, count * row_bytes);
      T* dst = slots + static_cast<std::size_t>(slot) * rows * stride;
      for (int r = 0; r < count; ++r)
        bulk_load(dst + static_cast<std::size_t>(r) * stride, row_src(p, r), row_bytes, full + slot);
    }
  }
  // The producer lane, before the copies of plane p (bytes in all, on its full barrier,
  // which completes when they land): waits until plane p - NS is released, arms the
  // barrier and returns the slot.
  __device__ int claim(int p, unsigned bytes) const {
    const int slot = slot_of(p);
    if (p - first >= NS) mbarrier_wait(empty + slot, parity_of(p) ^ 1u);
    mbarrier_arrive_expect_tx(full + slot, bytes);
    return slot;
  }
};

}  // namespace adi3d::cuda
