#pragma once
// The MPI tests' observer of a run's final field: on the whole grid at rank 0, gathered
// from every rank's owned planes (or the calling rank's field alone: comm null).
#include "app/heat_run.hpp"
#include "solvers/distributed/distributed_backend.hpp"

#include <vector>

namespace adi3d {

template <class T>
class FinalField final : public app::RunObserver<T> {
 public:
  FinalField(const SlabDecomposition& slab, Communicator* comm) : slab_(slab), comm_(comm) {}
  void on_start(long, double, Backend<T>&, const T*) override {}
  void on_step(long, double, Backend<T>&, const T*) override {}
  void on_end(long, double, Backend<T>& backend, const T* u) override {
    if (auto* distributed = dynamic_cast<DistributedBackend<T>*>(&backend))
      fused_slab = distributed->last_step_fused_slab();
    std::vector<T> owned(slab_.owned_size());
    backend.download(u + slab_.owned_offset(), owned.data(), owned.size());
    if (!comm_) {
      field = std::move(owned);
      return;
    }
    field.resize(comm_->rank() == 0 ? slab_.whole.size() : 0);
    comm_->gather(owned.data(), owned.size() * sizeof(T), field.data(), 0);
  }
  std::vector<T> field;
  bool fused_slab = false;  // the last step was the local backend's fused slab step

 private:
  SlabDecomposition slab_;
  Communicator* comm_;
};

}  // namespace adi3d
