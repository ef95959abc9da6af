#include "io/vtk_snapshots.hpp"

#include "io/snapshot_files.hpp"

#include <fmt/format.h>
#include <vtkCallbackCommand.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkXMLImageDataWriter.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <regex>
#include <system_error>

namespace fs = std::filesystem;

namespace adi3d::io {
namespace {

struct PvdEntry {
  long step;
  double time;
  std::string file;  // relative to the .pvd
};

// Captures VTK's error text instead of letting VTK print it.
void capture_error(vtkObject*, unsigned long, void* client, void* call) {
  if (call) *static_cast<std::string*>(client) = static_cast<const char*>(call);
}

// vtkErrorCode's names without linking VTK::CommonMisc for GetStringFromErrorCode.
std::string error_code_text(unsigned long code) {
  switch (code) {
    case vtkErrorCode::NoError: return "";
    case vtkErrorCode::FileNotFoundError: return "file not found";
    case vtkErrorCode::CannotOpenFileError: return "cannot open the file";
    case vtkErrorCode::OutOfDiskSpaceError: return "out of disk space";
    default: return "VTK error code " + std::to_string(code);
  }
}

class VtkSeriesWriter final : public SnapshotWriter {
 public:
  VtkSeriesWriter(const SeriesInfo& info, std::optional<long> resume_after_step)
      : info_(info),
        pvd_path_((fs::path(info.dir) / "snapshots.pvd").string()),
        vti_dir_((fs::path(info.dir) / "vtk").string()) {
    std::error_code ec;
    fs::create_directories(vti_dir_, ec);
    if (ec) throw OutputError(fmt::format("{}: cannot create the directory: {}", vti_dir_, ec.message()));
    if (resume_after_step && fs::exists(pvd_path_)) {
      // Our own .pvd: one DataSet element per line.
      const std::string text = read_text_file(pvd_path_);
      const std::regex line("<DataSet timestep=\"([^\"]+)\"[^>]*file=\"(vtk/snapshot_([0-9]+)\\.p?vti)\"");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
        const long step = std::stol((*it)[3]);
        if (step <= *resume_after_step) entries_.push_back({step, std::stod((*it)[1]), (*it)[2]});
      }
      if (info_.ranks.rank() == 0) write_pvd();
    }
  }

  void write(const Snapshot& s) override {
    const OutputRanks& ranks = info_.ranks;
    const std::string stem = "vtk/snapshot_" + snapshot_label(s.step);
    const std::string rel = ranks.shared() ? stem + ".pvti" : stem + ".vti";
    std::exception_ptr failure;
    try {
      if (ranks.shared())
        write_image(s, fmt::format("{}_p{:04d}.vti", stem, ranks.rank()), piece_with_next_plane(s));
      else
        write_image(s, rel, {});
    } catch (...) {
      failure = std::current_exception();
    }
    if (any_rank_failed(ranks, failure != nullptr)) {
      if (failure) std::rethrow_exception(failure);
      throw OutputError(fmt::format("{}: snapshot {} failed on another rank", pvd_path_, snapshot_label(s.step)));
    }
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const PvdEntry& e) { return e.step >= s.step; }),
                   entries_.end());
    entries_.push_back({s.step, s.time, rel});
    if (ranks.rank() != 0) return;
    if (ranks.shared()) write_text_atomically((fs::path(info_.dir) / rel).string(), pvti_document(s, stem));
    write_pvd();
  }

  std::string description() const override {
    return pvd_path_ + " + " + vti_dir_ + (info_.ranks.shared() ? "/*.pvti (a .vti piece per rank)" : "/*.vti");
  }

 private:
  // A rank's piece: its planes and, below the last rank, the next rank's first plane, so
  // that the pieces meet (point data: without the shared plane ParaView shows a gap of one
  // cell between them). In the fields' memory types; empty buffers for the last rank.
  std::vector<std::vector<unsigned char>> piece_with_next_plane(const Snapshot& s) const {
    const OutputRanks& ranks = info_.ranks;
    const Grid3& g = info_.grid;
    const int r = ranks.rank();
    const int below = r > 0 ? r - 1 : -1, above = r + 1 < ranks.size() ? r + 1 : -1;
    std::vector<std::vector<unsigned char>> pieces;
    for (const FieldBuffer& f : s.fields) {
      const std::size_t value_bytes = f.data_single() ? 4 : 8;
      const std::size_t plane_bytes = static_cast<std::size_t>(g.n[0]) * g.n[1] * value_bytes;
      const std::size_t own = f.size() * value_bytes;
      std::vector<unsigned char> piece(own + (above >= 0 ? plane_bytes : 0));
      std::memcpy(piece.data(), f.data(), own);
      std::vector<unsigned char> unused(plane_bytes);  // what the rank below sends up: nothing needed
      ranks.comm->exchange(below, f.data(), unused.data(), above, f.data(), piece.data() + own, plane_bytes);
      pieces.push_back(std::move(piece));
    }
    return pieces;
  }

  // Writes the image of this rank's planes (`pieces`: the fields' values with the next
  // rank's plane; empty: the fields as they are, the whole grid) to DIR/rel.
  void write_image(const Snapshot& s, const std::string& rel,
                   const std::vector<std::vector<unsigned char>>& pieces) const {
    const std::string path = (fs::path(info_.dir) / rel).string();
    const std::string tmp = path + ".tmp";
    const Grid3& g = info_.grid;
    const std::size_t plane = static_cast<std::size_t>(g.n[0]) * g.n[1];
    const int first = info_.ranks.first_plane();
    const int planes = pieces.empty() ? g.n[2]
                                      : static_cast<int>(pieces.front().size() /
                                                         (plane * (s.fields.front().data_single() ? 4 : 8)));
    vtkNew<vtkImageData> image;
    image->SetExtent(0, g.n[0] - 1, 0, g.n[1] - 1, first, first + planes - 1);
    image->SetOrigin(g.lo[0], g.lo[1], g.lo[2]);
    image->SetSpacing(g.h[0], g.h[1], g.h[2]);
    std::vector<std::vector<float>> converted;  // double values stored as float32
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
      const FieldBuffer& f = s.fields[i];
      const void* data = pieces.empty() ? f.data() : pieces[i].data();
      const std::size_t size = plane * static_cast<std::size_t>(planes);
      // The arrays borrow the buffers (save = 1: VTK never frees them); only a field stored
      // in another type than its memory's is converted first.
      vtkSmartPointer<vtkDataArray> array;
      const auto n = static_cast<vtkIdType>(size);
      if (f.single) {
        const float* values = static_cast<const float*>(data);
        if (!f.data_single()) {
          const double* d = static_cast<const double*>(data);
          values = converted.emplace_back(d, d + size).data();
        }
        auto a = vtkSmartPointer<vtkFloatArray>::New();
        a->SetArray(const_cast<float*>(values), n, 1);
        array = a;
      } else {
        if (f.data_single()) throw OutputError(path + ": a float field cannot be stored as float64");
        auto a = vtkSmartPointer<vtkDoubleArray>::New();
        a->SetArray(const_cast<double*>(static_cast<const double*>(data)), n, 1);
        array = a;
      }
      array->SetName(f.name.c_str());
      image->GetPointData()->AddArray(array);
    }
    if (!s.fields.empty()) image->GetPointData()->SetActiveScalars(s.fields.front().name.c_str());

    std::string vtk_error;
    vtkNew<vtkCallbackCommand> on_error;
    on_error->SetCallback(capture_error);
    on_error->SetClientData(&vtk_error);
    vtkNew<vtkXMLImageDataWriter> writer;
    writer->AddObserver(vtkCommand::ErrorEvent, on_error);
    writer->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, on_error);
    writer->SetInputData(image);
    writer->SetFileName(tmp.c_str());
    writer->SetDataModeToAppended();
    writer->EncodeAppendedDataOff();  // raw binary, not base64
    writer->SetCompressorTypeToZLib();
    writer->SetHeaderTypeToUInt64();
    if (writer->Write() != 1 || writer->GetErrorCode() != vtkErrorCode::NoError) {
      std::remove(tmp.c_str());
      const unsigned long code = writer->GetErrorCode();
      std::string reason = error_code_text(code);
      if (reason.empty()) reason = vtk_error.substr(0, vtk_error.find('\n'));
      throw OutputError(fmt::format("{}: cannot write the VTK image{}{}", tmp, reason.empty() ? "" : ": ", reason));
    }
    commit_file(tmp, path);
  }

  // The .pvti that joins the ranks' pieces of one snapshot (VTK's PImageData format).
  std::string pvti_document(const Snapshot& s, const std::string& stem) const {
    const Grid3& g = info_.grid;
    const std::vector<int>& starts = info_.ranks.starts;
    const std::string name = fs::path(stem).filename().string();
    std::string out = fmt::format(
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
        "  <PImageData WholeExtent=\"0 {} 0 {} 0 {}\" GhostLevel=\"0\" Origin=\"{:.17g} {:.17g} {:.17g}\" "
        "Spacing=\"{:.17g} {:.17g} {:.17g}\" Direction=\"1 0 0 0 1 0 0 0 1\">\n",
        g.n[0] - 1, g.n[1] - 1, g.n[2] - 1, g.lo[0], g.lo[1], g.lo[2], g.h[0], g.h[1], g.h[2]);
    out += s.fields.empty() ? "    <PPointData>\n"
                            : fmt::format("    <PPointData Scalars=\"{}\">\n", s.fields.front().name);
    for (const FieldBuffer& f : s.fields)
      out += fmt::format("      <PDataArray type=\"{}\" Name=\"{}\"/>\n", f.single ? "Float32" : "Float64", f.name);
    out += "    </PPointData>\n";
    for (std::size_t r = 0; r + 1 < starts.size(); ++r) {
      const int last = r + 2 < starts.size() ? starts[r + 1] : starts[r + 1] - 1;  // the pieces share a plane
      out += fmt::format("    <Piece Extent=\"0 {} 0 {} {} {}\" Source=\"{}_p{:04d}.vti\"/>\n", g.n[0] - 1,
                         g.n[1] - 1, starts[r], last, name, r);
    }
    out += "  </PImageData>\n</VTKFile>\n";
    return out;
  }

  void write_pvd() {
    std::string out =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        "  <Collection>\n";
    for (const PvdEntry& e : entries_)
      out += fmt::format("    <DataSet timestep=\"{:.17g}\" group=\"\" part=\"0\" file=\"{}\"/>\n", e.time, e.file);
    out += "  </Collection>\n</VTKFile>\n";
    write_text_atomically(pvd_path_, out);
  }

  SeriesInfo info_;
  std::string pvd_path_, vti_dir_;
  std::vector<PvdEntry> entries_;
};

}  // namespace

std::unique_ptr<SnapshotWriter> make_vtk_series_writer(const SeriesInfo& info,
                                                       std::optional<long> resume_after_step) {
  return std::make_unique<VtkSeriesWriter>(info, resume_after_step);
}

}  // namespace adi3d::io
