#pragma once
// Line solves of the CUDA backend by a warp per line: y and z through the fused step's
// tile kernels, x through x_line_kernel (x_line_var_kernel with an alpha field). Plain
// C++ (no CUDA headers): the stream is the runtime's opaque CUstream_st*.
#include "solvers/array.hpp"
#include "solvers/discretization.hpp"
#include "solvers/operator_view.hpp"

#include <vector>

struct CUstream_st;

namespace adi3d::cuda {

namespace fused {
template <class T>
struct SolveArgs;  // fused_step_kernels.cuh
template <class T>
struct VarSolveArgs;  // fused_step_var_kernels.cuh
}  // namespace fused

// Lines along y or z of (I - tau A_axis) x = d, in place, through the fused step's y/z
// tile kernels, and lines along x through x_line_kernel or x_line_var_kernel (contiguous
// lines need no tile): each value of d read and written once (2 arrays per point; 3 with
// an alpha field, whose tile or line comes along), a warp per line. Takes Dirichlet or Neumann ends
// on the lines, periodic ones (cyclic lines of constant alpha and at least 3 nodes, by
// Sherman-Morrison: the warp solve of the modified matrix, corrected as each line is
// stored), any faces on the other axes, and up to 1056 unknowns per line. Every line is
// solved, face lines of the other axes too, as the
// other line solvers do; the values of d on a line's Dirichlet end nodes enter its first
// and last rows. Constant alpha: the factors of each (axis, n, ends, tau, alpha, h) are
// made once on the host and kept on the device (the Poisson iteration cycles through a
// few tau). An alpha field: each warp forms its line's rows from the alpha tile or line
// (fused_step_var_kernels.cuh, a partition solve of the line), an x line by its material
// bytes where an index is attached; double x lines of alpha of more than 546 unknowns do
// not fit shared memory (false: the tridiag library takes them).
template <class T>
class WarpLineSolve {
 public:
  // False, launching nothing, where it does not apply.
  bool run(const OperatorView<T>& op, int axis, T tau, T* d, CUstream_st* stream);

 private:
  // Whether a kernel's tile fits the device's shared memory, and how many of its blocks
  // the whole device holds at once.
  struct Fit {
    bool fits;
    int resident_blocks;
  };
  // Per (device, axis, n, cap): the launch of the alpha-field kernel (no factors).
  struct FieldLaunch {
    int device, axis, n, cap;
    Fit fit;
    void (*kernel)(fused::VarSolveArgs<T>);
    int threads;
    std::size_t smem;
    int lines;  // per tile
  };
  // The nodes of one call's lines per axis: the unknowns along the lines' axis, every
  // node across it.
  struct Span {
    int first[3], last[3];
  };

  // Per (device, axis, n, ends, tau, alpha, h): the warp solve's factors and the launch.
  struct Factors {
    int device, axis;
    LineMatrixKey<T> key;
    T tau;
    Fit fit;
    void (*kernel)(fused::SolveArgs<T>);
    int threads;
    std::size_t smem;  // dynamic shared memory per block
    T s;               // -a of the interior rows
    // The warp solve's alpha, Gf, Gb (3 x 32 cap); for cyclic lines then Sherman-Morrison's
    // corner ratio, inverse denominator and z (n values): fused::cyclic_correction.
    Array<T> values;
  };
  // The cached entry for lines along axis whose unknowns are first..last (the key's ends
  // and n fix them), made on first use: the queries of device attributes and occupancy
  // are paid once, not per solve.
  const Factors& factors(const OperatorView<T>& op, int axis, T tau, int first, int last, int cap, int device,
                         CUstream_st* stream);

  std::vector<Factors> cache_;
  std::vector<FieldLaunch> field_launches_;
};

}  // namespace adi3d::cuda
