#pragma once
// adi3d bench: measurements that live outside the tests. Each benchmark prints a table
// and can write JSON with the date, the machine and the exact command.
#include "solvers/backend.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace adi3d {
class MpiSession;
}

namespace adi3d::app {

struct BenchOptions {
  std::vector<int> sizes;
  int repetitions = 5;
  std::string json_path;  // empty: no JSON
  std::string command_line;
};

int bench_cpu(const BenchOptions& options);
int bench_gpu(const BenchOptions& options);
// adi3d bench tridiag [options]: parses its own options (args after the kind).
int bench_tridiag(const std::vector<std::string>& args);
// adi3d bench adi [options]: our step vs cuSPARSE and explicit, time to solution (bench_adi.cpp).
int bench_adi(const std::vector<std::string>& args);

// adi3d bench poisson [options]: a Poisson deck in double, float and mixed precision
// (bench_poisson.cpp).
int bench_poisson(const std::vector<std::string>& args);
// The deck at n^3 solved `repetitions` times as adi3d run solves it, in precision float,
// double or mixed (tol <= 0: the precision's default), by solver.method `method` (adi or
// spectral): median wall time, iterations, residual, errors against the exact solution,
// as one JSON row.
nlohmann::json poisson_solve_row(const std::string& deck_path, int n, const std::string& precision, double tol,
                                 BackendKind kind, int repetitions, const std::string& method = "adi");

// adi3d bench output [options]: a snapshot through the pipeline against the disk's
// sequential floor, in the same run (bench_output.cpp).
int bench_output(const std::vector<std::string>& args);

// adi3d bench scaling [options], on every rank of an mpirun (bench_scaling.cpp).
int bench_scaling(const std::vector<std::string>& args, MpiSession& mpi);

// Writes {"benchmark", "date", "host", "command", ...payload} to options.json_path.
void write_bench_json(const BenchOptions& options, const std::string& benchmark, const nlohmann::json& payload);

}  // namespace adi3d::app
