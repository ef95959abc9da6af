#pragma once
// Standalone batched tridiagonal solver: general a, b, c, d; contiguous or interleaved
// batches; float and double; CPU (OpenMP) and CUDA; cyclic systems by Sherman-Morrison.
// The CUDA path is the multi-stage, auto-tuned method of Davidson, Zhang & Owens
// (IPDPS 2011): stage 1 cooperative splitting of few large systems, stage 2 per-system
// PCR splitting, stage 3/4 an on-chip PCR-Thomas base kernel. No CUDA header here.
//
// Row i of system s reads a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i]. For a
// non-cyclic system a[0] and c[n-1] are ignored (any value); for a cyclic system they are
// the corner entries coupling x[0] to x[n-1]. The solution x overwrites d.
#include <string>
#include <vector>

namespace adi3d::tridiag {

enum class Layout {
  contiguous,   // element i of system s at s*n + i
  interleaved,  // element i of system s at i*count + s
};

template <class T>
struct TridiagBatch {
  const T* a = nullptr;
  const T* b = nullptr;
  const T* c = nullptr;
  T* d = nullptr;  // right-hand sides in, solutions out
  long n = 0;      // equations per system (>= 1)
  long count = 0;  // number of systems (>= 0)
  Layout layout = Layout::contiguous;
  bool cyclic = false;
};

// How stage 1 splits a few large systems (paper §III-C). pcr is the paper's cooperative
// global PCR, one launch (grid-wide synchronisation) per halving; partition cuts each
// system into chunks of split_chunk rows, reduces every chunk to its two end rows (a
// tridiagonal interface system of 2 rows per chunk, solved recursively) and
// back-substitutes: one pass per level and a factor split_chunk/2 per level instead of 2.
// reg_partition is the register-resident variant (contiguous systems; others fall back to
// partition): every thread holds a chunk of split_chunk (4, 8 or 16) rows in registers and
// reduces it to one separator row (a factor split_chunk per level); nothing but the
// reduced system is written, and the substitution pass re-reads a, b, c, d instead of
// three stored sweep arrays (9 arrays per equation and level instead of 11).
enum class Stage1Method { partition, pcr, reg_partition };

// The base solver for subsystems that fit the base size (paper §III-A): pcr_thomas loads
// each subsystem into shared memory (strided when stage 2 left it strided) and runs PCR
// until pcr_thomas_switch subsystems remain, then one thread per subsystem does Thomas;
// thread_thomas is the coalesced variant: one thread per subsystem, Thomas straight from
// global memory (interleaved subsystems make its loads coalesced); partition is the O(n)
// on-chip base: the subsystem is loaded into shared memory, every thread eliminates its
// own contiguous chunk of base_chunk rows to the chunk's two end rows, the interface
// system (2 rows per chunk) is solved by PCR in shared memory, and each thread then
// substitutes its chunk's interior rows; reg_partition is the same method with the chunks
// in registers (contiguous subsystems of up to 256 or 512 chunks; others fall back to
// partition): coalesced loads (16-byte vectors where aligned), each thread eliminates its base_chunk (4, 8 or 16)
// rows to one separator row, PCR on the separators across the threads (warp shuffles up
// to 32 threads per subsystem), back-substitution in registers, coalesced stores. Shared
// memory holds only the separators and a per-warp transpose buffer, so it runs at high
// occupancy at the 20/40-byte floor.
enum class BaseKernel { pcr_thomas, thread_thomas, partition, reg_partition };

// Every switch point of the solver. Any values within the documented ranges give a correct
// solve; they only move the time. default_policy() is the untuned, always-safe choice.
struct TridiagPolicy {
  Stage1Method stage1 = Stage1Method::partition;
  // Stage 1 runs while the batch has fewer independent systems than this (paper: "enough
  // systems to keep all processors busy", default 16 there).
  long stage1_min_systems = 256;
  // Rows per chunk for partition splitting, i.e. elements per thread (4..128; 4, 8 or 16
  // for reg_partition, larger values taking 16); 0 picks the precision's default (32 for
  // float, 16 for double).
  int split_chunk = 0;
  // Largest subsystem handed to the on-chip base kernel; larger ones are split (stage 2).
  long base_size = 1024;
  // PCR steps in the base kernel stop at this many interleaved subsystems (power of two,
  // 1..1024); it is also the number of threads per subsystem.
  int pcr_thomas_switch = 64;
  BaseKernel base = BaseKernel::pcr_thomas;
  // Rows per thread of the partition base kernels (4..64; 4, 8 or 16 for reg_partition,
  // larger values taking 16).
  int base_chunk = 8;
  // Threads per block for the one-thread-per-system, element-wise and register kernels.
  int block_threads = 256;
  // Interleaved batches with at least this many systems use one thread per system
  // (coalesced Thomas) directly, however large n is.
  long interleaved_thread_min = 16384;
};

std::string to_string(const TridiagPolicy& p);
const char* base_kernel_name(BaseKernel b);    // pcr_thomas, thread_thomas, partition, reg_partition
const char* stage1_method_name(Stage1Method m);  // partition, pcr, reg_partition

// Host solve, OpenMP over systems (interleaved batches in vectorised blocks).
template <class T>
void solve_cpu(const TridiagBatch<T>& batch);

// Device solve: every pointer in batch is a device pointer. stream is a cudaStream_t
// (nullptr: the default stream). Asynchronous with respect to the host; temporary device
// memory is stream-ordered (cudaMallocAsync). Throws when CUDA was not compiled in.
template <class T>
void solve_cuda(const TridiagBatch<T>& batch, const TridiagPolicy& policy, void* stream = nullptr);

// Untuned defaults (safe on every device).
TridiagPolicy default_policy();
// Static guess from the current device's properties (SM count, opt-in shared memory per
// block, registers) for this precision and workload (paper §IV-C).
template <class T>
TridiagPolicy static_policy(long n, long count, Layout layout);

// One workload the dynamic search times.
struct TuneCase {
  long n;
  long count;
  Layout layout;
};

struct TuneResult {
  TridiagPolicy policy;
  double best_ms = 0;    // time of the tuned policy on the last case
  double static_ms = 0;  // time of the static guess on the last case
  int candidates = 0;    // policies timed
};

// Dynamic search over decoupled parameters (paper §IV-D): the base kernel's PCR-to-Thomas
// switch and base size first (they do not depend on stage 1), then the stage-1 method,
// chunk and switch point, each starting from the static guess and walking to the nearest
// local minimum. Times with CUDA events on random diagonally dominant data of the given
// sizes (device memory for the largest case is allocated here).
template <class T>
TuneResult tune(const std::vector<TuneCase>& cases, bool verbose = false);

// Policy for a solve on the current device: the tuning file's entry for this device and
// precision if one was loaded (see tuning_file.hpp: an explicit load_tuning_file, else
// default_tuning_path(), which `adi3d tune` writes), otherwise the static guess.
template <class T>
TridiagPolicy policy_for(long n, long count, Layout layout);

// True when CUDA was compiled in and at least one device is visible.
bool cuda_available();
// True when the CUDA solver was compiled in (-DADI3D_CUDA=ON), device or not.
bool cuda_compiled();

}  // namespace adi3d::tridiag

// The precision-templated CUDA entry points above, instantiated for T (inside namespace
// adi3d::tridiag) by the file that defines them: tridiag_cuda.cu, or
// tridiag_unavailable.cpp in a CPU-only build.
#define ADI3D_TRIDIAG_INSTANTIATE_CUDA(T)                                              \
  template void solve_cuda<T>(const TridiagBatch<T>&, const TridiagPolicy&, void*);    \
  template TridiagPolicy static_policy<T>(long, long, Layout);                         \
  template TridiagPolicy policy_for<T>(long, long, Layout);                            \
  template TuneResult tune<T>(const std::vector<TuneCase>&, bool);
