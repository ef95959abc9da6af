#include "solvers/rtc/compile_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace adi3d::rtc {
namespace {

// An entry: the magic line, the key's and the binary's sizes, the binary's hash, then the
// key and the binary.
constexpr char kMagic[] = "adi3d-rtc-cache 1\n";

struct Header {
  std::uint64_t key_size, binary_size, binary_hash;
};

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

}  // namespace

std::uint64_t fnv1a(const char* data, std::size_t size) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

CompileCache CompileCache::from_environment() {
  if (std::string d = env("ADI3D_RTC_CACHE"); !d.empty()) return d == "off" ? CompileCache() : CompileCache(d);
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) return CompileCache(x + "/adi3d/rtc");
  if (std::string h = env("HOME"); !h.empty()) return CompileCache(h + "/.cache/adi3d/rtc");
  return {};
}

std::string CompileCache::path_of(const std::string& key) const {
  return directory_ + "/" + hex(fnv1a(key.data(), key.size())) + ".bin";
}

std::optional<std::vector<char>> CompileCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string magic(sizeof kMagic - 1, '\0');
  Header h{};
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != kMagic ||
      !in.read(reinterpret_cast<char*>(&h), sizeof h) || h.key_size != key.size())
    return std::nullopt;
  std::string stored_key(key.size(), '\0');
  if (!in.read(stored_key.data(), static_cast<std::streamsize>(key.size())) || stored_key != key) return std::nullopt;
  std::vector<char> binary(static_cast<std::size_t>(h.binary_size));
  if (!in.read(binary.data(), static_cast<std::streamsize>(binary.size())) || in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
  if (fnv1a(binary.data(), binary.size()) != h.binary_hash) return std::nullopt;
  return binary;
}

bool CompileCache::store(const std::string& key, const std::vector<char>& binary) const {
  if (!enabled()) return false;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return false;
  const std::string path = path_of(key);
  // A name of this process's and this call's own: two runs (or threads) storing the same
  // entry each rename a whole file.
  static std::atomic<unsigned> calls{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(calls++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const Header h{key.size(), binary.size(), fnv1a(binary.data(), binary.size())};
    out.write(kMagic, sizeof kMagic - 1);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(binary.data(), static_cast<std::streamsize>(binary.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace adi3d::rtc
