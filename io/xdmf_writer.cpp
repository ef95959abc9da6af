#include "io/xdmf_writer.hpp"

#include <fmt/format.h>

namespace adi3d::io {

std::string xdmf_document(const Grid3& grid, const std::vector<XdmfEntry>& entries) {
  const std::string dims = fmt::format("{} {} {}", grid.n[2], grid.n[1], grid.n[0]);
  std::string out =
      "<?xml version=\"1.0\" ?>\n"
      "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      "<Xdmf xmlns:xi=\"http://www.w3.org/2001/XInclude\" Version=\"3.0\">\n"
      "  <Domain>\n"
      "    <Grid Name=\"adi3d\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfEntry& e : entries) {
    // Times with 17 significant digits so that readers see the solver's values exactly.
    out += fmt::format("      <Grid Name=\"step {}\" GridType=\"Uniform\">\n", e.step);
    out += fmt::format("        <Time Value=\"{:.17g}\"/>\n", e.time);
    out += fmt::format("        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{}\"/>\n", dims);
    out += "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
    out += fmt::format(
        "          <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"XML\">{:.17g} {:.17g} {:.17g}</DataItem>\n",
        grid.lo[2], grid.lo[1], grid.lo[0]);
    out += fmt::format(
        "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"XML\">{:.17g} {:.17g} {:.17g}</DataItem>\n",
        grid.h[2], grid.h[1], grid.h[0]);
    out += "        </Geometry>\n";
    for (const XdmfField& f : e.fields) {
      out += fmt::format("        <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Node\">\n", f.name);
      out += fmt::format(
          "          <DataItem Dimensions=\"{}\" NumberType=\"Float\" Precision=\"{}\" Format=\"HDF\">"
          "{}:/{}</DataItem>\n",
          dims, f.single ? 4 : 8, e.file, f.name);
      out += "        </Attribute>\n";
    }
    out += "      </Grid>\n";
  }
  out += "    </Grid>\n  </Domain>\n</Xdmf>\n";
  return out;
}

}  // namespace adi3d::io
