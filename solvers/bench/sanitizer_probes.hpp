#pragma once
// Probes of what compute-sanitizer sees, for scripts/gpu-check. No CUDA headers here.
namespace adi3d::cuda {

// Writes a buffer of floats by bulk stores from shared memory (sm_90's copy engine, as
// the planes stencil and the fused steps write their rows), then reads it back with
// ordinary loads in a second kernel: true when every value arrived. Under initcheck the
// reads show whether the tool follows what bulk stores write: where it reports them as
// uninitialised, so are the reads of every array those kernels wrote (gpu-check then runs
// initcheck with ADI3D_BULK_COPIES=off). Throws BackendUnavailable where the device or
// the build has no bulk copies.
bool bulk_store_round_trip(int device);

}  // namespace adi3d::cuda
