#pragma once
// The fused Douglas step for a node diffusivity field (fused_step_var.cu): the launches
// behind FusedDouglasStep when op.alpha_field is set. Plain C++ (no CUDA headers).
#include "solvers/operator_view.hpp"

struct CUstream_st;

namespace adi3d::cuda {

// True when no axis is periodic and every pass's lines fit the warp solve (at most 1058
// unknowns; x lines between Dirichlet faces, the tridiag library's generated rows) and its
// shared memory on this device; with a Neumann face, every axis has 3 nodes or more.
// op.alpha_field must be set.
template <class T>
bool fused_variable_applies(const OperatorView<T>& op, int device);

// u += du of one Douglas step (FusedDouglasStep::run), for grids of at least 3 nodes per
// axis where fused_variable_applies holds. variable_x_pass: see fused_variable_x_pass.
// Returns the kernels of its x pass (1 or 2), or 0 where it launched nothing: a Neumann
// face on x lines that neither the one kernel nor the warp-per-line solve takes (double
// lines of alpha of more than 546 unknowns on unaligned rows).
template <class T>
int fused_variable_step(const OperatorView<T>& op, T* u, const T* f, T dt, T tau, T* d, int device,
                        CUstream_st* stream, bool variable_x_pass = true);

// Its first pass alone, d = (I - tau Ax)^-1 dt (A u + f) on the interior nodes: with
// variable_x_pass, one kernel that forms the rhs itself where it applies (by the material
// index where op has one, else from alpha); else the stencil and the x solve. Returns the
// kernels launched: 1 or 2.
template <class T>
int fused_variable_x_pass(const OperatorView<T>& op, const T* u, const T* f, T dt, T tau, T* d, int device,
                          CUstream_st* stream, bool variable_x_pass = true);

}  // namespace adi3d::cuda
