#pragma once
// The XDMF 3 index of an HDF5 snapshot file: a temporal collection of 3DCoRectMesh grids
// (ORIGIN_DXDYDZ geometry; XDMF lists these, and the dimensions, in z, y, x order) with
// node-centred attributes that reference the datasets in the HDF5 file. ParaView opens
// it directly (Xdmf3 reader).
#include "solvers/grid.hpp"

#include <string>
#include <vector>

namespace adi3d::io {

struct XdmfField {
  std::string name;
  bool single = false;  // float32 or float64 in the HDF5 file
};

struct XdmfEntry {
  long step = 0;
  double time = 0;
  std::string group;  // "/snapshots/000010"
  std::vector<XdmfField> fields;
};

// The whole XDMF document; `h5_name` is the HDF5 file name relative to the XDMF file.
std::string xdmf_document(const Grid3& grid, const std::string& h5_name,
                          const std::vector<XdmfEntry>& entries);

}  // namespace adi3d::io
