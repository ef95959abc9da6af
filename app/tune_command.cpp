// adi3d tune [--out FILE] [--precision P] [--quick]: tunes the batched tridiagonal solver
// for the current CUDA device and stores one policy per device and precision in the tuning
// file that later runs read (tridiag::policy_for): by default $ADI3D_TRIDIAG_TUNING, else
// $XDG_CONFIG_HOME/adi3d/tridiag_tuning.json, else $HOME/.config/adi3d/tridiag_tuning.json.
#include "app/commands.hpp"
#include "solvers/tridiag/tridiag.hpp"
#include "solvers/tridiag/tridiag_bench.hpp"
#include "solvers/tridiag/tuning_file.hpp"

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace adi3d::app {

int tune_command(const std::vector<std::string>& args) {
  std::string out = tridiag::default_tuning_path();
  std::string precision = "both";
  bool quick = false;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(&out),
      "tuning file to update (default: $ADI3D_TRIDIAG_TUNING, else $XDG_CONFIG_HOME/adi3d/tridiag_tuning.json, "
      "else ~/.config/adi3d/tridiag_tuning.json; later runs read the same default)")(
      "precision", po::value<std::string>(&precision)->default_value("both"), "float, double or both")(
      "quick", po::bool_switch(&quick), "tune on two small workloads only");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(visible).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: adi3d tune [options]\n\n"
                   "Tunes the batched tridiagonal solver for this CUDA device and stores the policy per\n"
                   "device and precision in the tuning file. Needs CUDA. Default file now: "
                << (out.empty() ? std::string("(none: set HOME or XDG_CONFIG_HOME)") : out) << "\n\n"
                << visible;
      return kExitOk;
    }
    if (precision != "float" && precision != "double" && precision != "both")
      throw po::error("--precision must be float, double or both");
    if (out.empty()) throw po::error("no default tuning file (HOME and XDG_CONFIG_HOME unset): pass --out FILE");
  } catch (const po::error& e) {
    std::cerr << "adi3d tune: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!tridiag::cuda_compiled()) {
    std::cerr << "adi3d tune: needs CUDA: this adi3d was built without it (configure with -DADI3D_CUDA=ON)\n";
    return kExitRuntime;
  }
  if (!tridiag::cuda_available()) {
    std::cerr << "adi3d tune: needs a CUDA device, and none is visible\n";
    return kExitRuntime;
  }
  tridiag::tune_to_file(out, precision, quick);
  return kExitOk;
}

}  // namespace adi3d::app
