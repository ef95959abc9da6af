#pragma once
// adi3d bench adi (issue 7): our Douglas step against a cuSPARSE Douglas step and an
// explicit (FTCS) step in one process; time to solution of the heat_sine deck; scaling of
// our step with n; the Poisson deck to a relative residual. Each part prints its table
// and returns its JSON; bench_adi.cpp parses options and writes the file.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace adi3d::app {

struct AdiBenchConfig {
  std::vector<int> step_sizes{256, 512};
  std::string step_precision = "both";  // float, double or both
  std::vector<int> scaling_sizes{64, 128, 256, 384, 512, 640, 768, 1024};
  std::vector<int> solve_sizes{256, 512};
  int repetitions = 20;
  double tolerance = 1e-4;             // max error at t_end, heat_sine
  double explicit_max_seconds = 60;    // longer explicit solves run a fraction and project
  int poisson_n = 257;
  double poisson_tol = 1e-8;
  std::string heat_deck = "inputs/heat_sine.ini";
  std::string poisson_deck = "inputs/poisson_dirichlet.ini";
  std::vector<std::string> parts{"steps", "scaling", "heat", "poisson"};
};

// Per step at each size and precision: copy, ours, cuSPARSE (with its stages), FTCS, each
// against its bytes floor and the copy measured at that size. copy_gbs receives the float
// copy bandwidth at the largest size (the run's anchor).
nlohmann::json adi_step_rows(const AdiBenchConfig& config, double& copy_gbs);
// Our step and FTCS, float, ns per point per step with n (sizes that fit in free memory).
nlohmann::json adi_scaling_rows(const AdiBenchConfig& config);
// heat_sine (float) to t_end with max error <= tolerance: ADI with the fewest steps that
// meet it (ours and cuSPARSE), explicit at its stability limit.
nlohmann::json adi_heat_rows(const AdiBenchConfig& config);
// The Poisson deck on CUDA (double) to poisson_tol.
nlohmann::json adi_poisson(const AdiBenchConfig& config);

// Bytes floor of one step: grid-sized arrays that must move per point, times the element size.
inline double floor_bytes(double points, int arrays, std::size_t element_bytes) {
  return points * arrays * static_cast<double>(element_bytes);
}

}  // namespace adi3d::app
