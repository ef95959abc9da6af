#pragma once
// The adi3d subcommands. Each returns the process exit code: 0 success, 2 usage or deck
// error, 1 runtime failure, 3 a Poisson solve that stagnated on its precision's rounding
// floor above solver.tol (its result is written).
#include <string>
#include <vector>

namespace adi3d {
class MpiSession;
}

namespace adi3d::app {

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNotConverged = 3;

// On every rank of the session (mpirun -np P adi3d run DECK): rank 0 prints and writes.
int run_command(const std::vector<std::string>& args, MpiSession& mpi);
int check_command(const std::vector<std::string>& args);
int info_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args, MpiSession& mpi);
int tune_command(const std::vector<std::string>& args);

std::string version_string();
// The source's git commit at build time: a short hash, "-dirty" appended when tracked files
// had changes, "unknown" outside a git checkout (app/CMakeLists.txt).
const char* git_commit();

}  // namespace adi3d::app
