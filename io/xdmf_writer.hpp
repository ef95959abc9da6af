#pragma once
// The XDMF 3 index of HDF5 snapshot files: a temporal collection of 3DCoRectMesh grids
// (ORIGIN_DXDYDZ geometry; XDMF lists these, and the dimensions, in z, y, x order) with
// node-centred attributes that reference the datasets in the HDF5 files. ParaView opens
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
  std::string file;  // the snapshot's HDF5 file, relative to the XDMF file; fields at /NAME
  std::vector<XdmfField> fields;
};

// The whole XDMF document.
std::string xdmf_document(const Grid3& grid, const std::vector<XdmfEntry>& entries);

}  // namespace adi3d::io
