#pragma once
// The tridiagonal library's benchmark and tuning driver, callable from the adi3d CLI
// (`adi3d bench tridiag`, `adi3d tune`): the paper's workloads (count x n) through our
// multi-stage solver (default, static and tuned policies) and cuSPARSE (gtsv2StridedBatch,
// gtsv2_nopivot), and the CPU solver against LAPACK dgtsv on a subset. Plain C++: no CUDA
// header. Throws std::runtime_error when CUDA was not compiled in or no device is visible.
#include <string>
#include <vector>

namespace adi3d::tridiag {

struct BenchConfig {
  int repetitions = 15;            // timed runs per row (median; at least 10 are taken)
  std::string precision = "both";  // float, double or both
  std::string tune_path;           // non-empty: tune first and store the entries here
  std::string tuning_path;         // non-empty: rows "ours-tuned" use this file's entries
  bool cpu = true;                 // also time the CPU solver and LAPACK dgtsv
  bool quick = false;              // two small workloads only
};

struct BenchRow {
  std::string workload;
  long count = 0;
  long n = 0;
  std::string precision;
  std::string solver;
  double time_ms = 0;
  double gpoints_per_s = 0;
  double effective_gbs = 0;  // floor bytes (4 arrays read + 1 written) / time
  double pct_copy_bw = 0;    // effective_gbs / copy bandwidth measured in the same run
  double rel_residual = 0;   // ||Ax - d|| / ||d|| in double
  std::string policy;        // ours only
};

struct BenchReport {
  std::string device;
  int sms = 0;
  double copy_gbs = 0;  // device-to-device copy, read + write
  std::vector<BenchRow> rows;
};

// Runs every workload (printing each row to stdout as it completes).
BenchReport run_bench(const BenchConfig& config);

// Tunes the solver for the current device over the bench workloads (quick: the two small
// ones) in the given precisions ("float", "double", "both") and upserts the entries into
// the tuning file at path (creating its directory). Prints one line per precision.
void tune_to_file(const std::string& path, const std::string& precision, bool quick);

}  // namespace adi3d::tridiag
