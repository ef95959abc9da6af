// Tuning file I/O (nlohmann_json) and the process-wide table of tuned policies.
#include "solvers/tridiag/tuning_file.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

namespace adi3d::tridiag {

namespace {

using nlohmann::json;

json to_json(const TridiagPolicy& p) {
  return json{{"stage1", stage1_method_name(p.stage1)},
              {"stage1_min_systems", p.stage1_min_systems},
              {"split_chunk", p.split_chunk},
              {"base_size", p.base_size},
              {"pcr_thomas_switch", p.pcr_thomas_switch},
              {"base", base_kernel_name(p.base)},
              {"base_chunk", p.base_chunk},
              {"block_threads", p.block_threads},
              {"interleaved_thread_min", p.interleaved_thread_min}};
}

TridiagPolicy policy_from_json(const json& j, const std::string& where) {
  TridiagPolicy p;
  auto need = [&](const char* key) -> const json& {
    if (!j.contains(key)) throw std::runtime_error(where + ": missing key '" + key + "'");
    return j.at(key);
  };
  const std::string s1 = need("stage1").get<std::string>();
  if (s1 == "partition") p.stage1 = Stage1Method::partition;
  else if (s1 == "pcr") p.stage1 = Stage1Method::pcr;
  else if (s1 == "reg_partition") p.stage1 = Stage1Method::reg_partition;
  else throw std::runtime_error(where + ": key 'stage1' is '" + s1 + "', valid: partition, pcr, reg_partition");
  p.stage1_min_systems = need("stage1_min_systems").get<long>();
  p.split_chunk = need("split_chunk").get<int>();
  p.base_size = need("base_size").get<long>();
  p.pcr_thomas_switch = need("pcr_thomas_switch").get<int>();
  const std::string b = need("base").get<std::string>();
  if (b == "pcr_thomas") p.base = BaseKernel::pcr_thomas;
  else if (b == "thread_thomas") p.base = BaseKernel::thread_thomas;
  else if (b == "partition") p.base = BaseKernel::partition;
  else if (b == "reg_partition") p.base = BaseKernel::reg_partition;
  else throw std::runtime_error(where + ": key 'base' is '" + b +
                                "', valid: pcr_thomas, thread_thomas, partition, reg_partition");
  p.base_chunk = j.value("base_chunk", p.base_chunk);  // absent in files written before it
  p.block_threads = need("block_threads").get<int>();
  p.interleaved_thread_min = need("interleaved_thread_min").get<long>();
  return p;
}

std::mutex table_mutex;
std::vector<TuningEntry> table;
bool table_loaded = false;

}  // namespace

std::vector<TuningEntry> read_tuning_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.contains("entries") || !j.at("entries").is_array())
    throw std::runtime_error(path + ": missing array 'entries'");
  std::vector<TuningEntry> out;
  int k = 0;
  for (const json& e : j.at("entries")) {
    const std::string where = path + ": entries[" + std::to_string(k++) + "]";
    try {
      TuningEntry t;
      t.device = e.at("device").get<std::string>();
      t.precision = e.at("precision").get<std::string>();
      t.policy = policy_from_json(e.at("policy"), where + ".policy");
      t.measured = e.value("measured", std::string());
      out.push_back(std::move(t));
    } catch (const json::exception& ex) {
      throw std::runtime_error(where + ": " + ex.what());
    }
  }
  return out;
}

void write_tuning_file(const std::string& path, const std::vector<TuningEntry>& entries) {
  json arr = json::array();
  for (const TuningEntry& e : entries)
    arr.push_back(json{{"device", e.device},
                       {"precision", e.precision},
                       {"policy", to_json(e.policy)},
                       {"measured", e.measured}});
  const std::string tmp = path + ".tmp";
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error(path + ": cannot write tuning file");
    out << json{{"format", "adi3d-tridiag-tuning-1"}, {"entries", arr}}.dump(2) << "\n";
    if (!out) throw std::runtime_error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot rename " + tmp);
}

void upsert(std::vector<TuningEntry>& entries, const TuningEntry& e) {
  for (TuningEntry& x : entries)
    if (x.device == e.device && x.precision == e.precision) {
      x = e;
      return;
    }
  entries.push_back(e);
}

std::string default_tuning_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
  };
  if (std::string p = env("ADI3D_TRIDIAG_TUNING"); !p.empty()) return p;
  if (std::string x = env("XDG_CONFIG_HOME"); !x.empty()) return x + "/adi3d/tridiag_tuning.json";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.config/adi3d/tridiag_tuning.json";
  return {};
}

void load_tuning_file(const std::string& path) {
  auto entries = read_tuning_file(path);
  std::lock_guard<std::mutex> lock(table_mutex);
  table = std::move(entries);
  table_loaded = true;
}

std::optional<TridiagPolicy> tuned_policy(const std::string& device, const std::string& precision) {
  std::lock_guard<std::mutex> lock(table_mutex);
  if (!table_loaded) {
    table_loaded = true;
    const std::string path = default_tuning_path();
    if (!path.empty()) table = read_tuning_file(path);
  }
  for (const TuningEntry& e : table)
    if (e.device == device && e.precision == precision) return e.policy;
  return std::nullopt;
}

}  // namespace adi3d::tridiag
