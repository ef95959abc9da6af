#pragma once
// A directory of device code compiled at run time (the formulas' NVRTC cubins), so that a
// later run of the same deck loads what an earlier one compiled: NVRTC took about 0.4 s for
// a process's first formula and 20 ms for each more on the H100 machine, where a whole small
// run takes 0.6 s. An entry holds its whole key (the program text, the compile options, the
// architecture and the NVRTC version), so that a hash collision or a damaged file is a miss,
// never a wrong binary. Plain C++: no CUDA here, and nothing a cache cannot do is an error
// (an unwritable directory, a full disk): the caller compiles as if there were no cache.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace adi3d::rtc {

class CompileCache {
 public:
  // No directory: a cache that never hits and stores nothing.
  CompileCache() = default;
  explicit CompileCache(std::string directory) : directory_(std::move(directory)) {}

  // $ADI3D_RTC_CACHE (a directory; "off" for none), else $XDG_CACHE_HOME/adi3d/rtc, else
  // $HOME/.cache/adi3d/rtc (none when neither variable is set).
  static CompileCache from_environment();

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  // The binary stored under key, or nothing (no entry, or one that is not whole and for
  // exactly this key).
  std::optional<std::vector<char>> load(const std::string& key) const;
  // Stores binary under key, written to a temporary name and renamed, so that a reader
  // sees an entry whole or not at all. Returns false where it could not (nothing thrown).
  bool store(const std::string& key, const std::vector<char>& binary) const;

  // The file of key's entry (a hash of the key names it).
  std::string path_of(const std::string& key) const;

 private:
  std::string directory_;
};

// 64-bit FNV-1a of bytes (names entries and checks their binaries).
std::uint64_t fnv1a(const char* data, std::size_t size);

}  // namespace adi3d::rtc
