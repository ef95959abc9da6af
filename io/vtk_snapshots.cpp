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
      const std::regex line("<DataSet timestep=\"([^\"]+)\"[^>]*file=\"(vtk/snapshot_([0-9]+)\\.vti)\"");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
        const long step = std::stol((*it)[3]);
        if (step <= *resume_after_step) entries_.push_back({step, std::stod((*it)[1]), (*it)[2]});
      }
      write_pvd();
    }
  }

  void write(const Snapshot& s) override {
    const std::string rel = "vtk/snapshot_" + snapshot_label(s.step) + ".vti";
    const std::string path = (fs::path(info_.dir) / rel).string();
    const std::string tmp = path + ".tmp";
    const Grid3& g = info_.grid;
    vtkNew<vtkImageData> image;
    image->SetDimensions(g.n[0], g.n[1], g.n[2]);
    image->SetOrigin(g.lo[0], g.lo[1], g.lo[2]);
    image->SetSpacing(g.h[0], g.h[1], g.h[2]);
    std::vector<std::vector<float>> converted;  // double values stored as float32
    for (const FieldBuffer& f : s.fields) {
      // The arrays borrow the snapshot's buffers (save = 1: VTK never frees them); only a
      // field stored in another type than its memory's is converted first.
      vtkSmartPointer<vtkDataArray> array;
      const auto n = static_cast<vtkIdType>(f.size());
      if (f.single) {
        const float* values = static_cast<const float*>(f.data());
        if (!f.data_single()) {
          const double* d = static_cast<const double*>(f.data());
          values = converted.emplace_back(d, d + f.size()).data();
        }
        auto a = vtkSmartPointer<vtkFloatArray>::New();
        a->SetArray(const_cast<float*>(values), n, 1);
        array = a;
      } else {
        if (f.data_single()) throw OutputError(path + ": a float field cannot be stored as float64");
        auto a = vtkSmartPointer<vtkDoubleArray>::New();
        a->SetArray(const_cast<double*>(static_cast<const double*>(f.data())), n, 1);
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
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const PvdEntry& e) { return e.step >= s.step; }),
                   entries_.end());
    entries_.push_back({s.step, s.time, rel});
    write_pvd();
  }

  std::string description() const override { return pvd_path_ + " + " + vti_dir_ + "/*.vti"; }

 private:
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
