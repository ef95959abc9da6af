#pragma once
// What a backend's fused step of one slab of a split z axis (Backend::fused_slab_step)
// needs from the distributed backend (distributed_backend.hpp): where the slab's ghost
// planes and owned rows are, the layout of the partition method's reduced systems, and the
// gather of every rank's interface rows. The backend forms its rank's message (y at the
// owned rows F and L of every z line and the four coupling coefficients; constant alpha),
// solves the reduced systems from the gathered messages and hands the z pass its ghost
// rows' true values: the z lines are then solved exactly in the fused pass that updates u.
// Plain C++.
#include "solvers/distributed/reduced_system.hpp"

struct CUstream_st;

namespace adi3d {

// The parts of a fused slab step's coupling (seconds): from the end of the x pass to the
// interface sums solved along y, and to every rank's gathered (all beside the y pass; the
// ghost values are then fixed combinations of them); and how long the z pass waited for
// them after the y pass.
struct SlabStepTimes {
  double sums = 0, reduced = 0;
  double waited = 0;
};

template <class T>
class SlabCoupling {
 public:
  virtual ~SlabCoupling() = default;
  // Whether the lowest and highest local plane is a neighbour's ghost plane.
  virtual bool ghost_lo() const = 0;
  virtual bool ghost_hi() const = 0;
  // The first and last owned plane of the slab (local indices): the rows F and L.
  virtual int row_first() const = 0;
  virtual int row_last() const = 0;
  // The reduced systems' layout for constant alpha (per_line false), this rank solving.
  virtual ReducedLines lines() const = 0;
  // Every rank's message (lines().message_size() values of backend memory) into gathered,
  // in rank order, queued on `stream`, a stream of the backend's device that is not
  // necessarily the backend's own.
  virtual void gather(const T* message, T* gathered, CUstream_st* stream) = 0;
  // Whether the step times its parts (a synchronisation at its end), and where they go.
  virtual bool timed() const = 0;
  virtual void record(const SlabStepTimes& times) = 0;
};

}  // namespace adi3d
