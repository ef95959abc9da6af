#pragma once
// VTK XML snapshots: DIR/vtk/snapshot_NNNNNN.vti per snapshot (vtkXMLImageDataWriter:
// binary, zlib-compressed, appended) and the time series DIR/snapshots.pvd, replaced
// atomically after every snapshot. Lives in its own library (adi3d_io_vtk) so that only
// vtk_snapshots.cpp compiles against VTK headers.
#include "io/snapshot.hpp"

#include <memory>
#include <optional>

namespace adi3d::io {

// With `resume_after_step` (a restart) the entries of an existing .pvd up to that step
// are kept; otherwise the series starts empty.
std::unique_ptr<SnapshotWriter> make_vtk_series_writer(const SeriesInfo& info,
                                                       std::optional<long> resume_after_step = std::nullopt);

}  // namespace adi3d::io
