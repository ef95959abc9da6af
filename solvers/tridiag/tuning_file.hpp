#pragma once
// Tuning file for the batched tridiagonal solver: JSON, one entry per (device name,
// precision) holding a TridiagPolicy and the measurement that justified it. Written by
// `adi3d tune [--out FILE]` (default: default_tuning_path()) or `adi3d bench tridiag --tune
// FILE`; read by later runs: load_tuning_file, or on first use of policy_for() the file at
// default_tuning_path(), after which policy_for() returns the entry.
#include "solvers/tridiag/tridiag.hpp"

#include <optional>
#include <string>
#include <vector>

namespace adi3d::tridiag {

struct TuningEntry {
  std::string device;     // cudaDeviceProp::name
  std::string precision;  // "float" or "double"
  TridiagPolicy policy;
  std::string measured;   // free text: workloads, times, date
};

// Reads every entry; a missing file gives an empty list; a malformed one throws
// std::runtime_error naming the file and the offending key.
std::vector<TuningEntry> read_tuning_file(const std::string& path);
// Writes the entries (replacing the file through a temporary name).
void write_tuning_file(const std::string& path, const std::vector<TuningEntry>& entries);
// Replaces the entry of the same device and precision, or appends.
void upsert(std::vector<TuningEntry>& entries, const TuningEntry& e);

// Where `adi3d tune` writes and policy_for() reads by default: $ADI3D_TRIDIAG_TUNING if
// set, else $XDG_CONFIG_HOME/adi3d/tridiag_tuning.json, else
// $HOME/.config/adi3d/tridiag_tuning.json (empty when neither variable is set).
std::string default_tuning_path();

// Process-wide table consulted by policy_for(). load_tuning_file replaces it.
void load_tuning_file(const std::string& path);
std::optional<TridiagPolicy> tuned_policy(const std::string& device, const std::string& precision);

}  // namespace adi3d::tridiag
