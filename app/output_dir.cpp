#include "app/output_dir.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace adi3d::app {

void prepare_output_dir(const io::Deck& deck, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) deck.fail("output.dir", fmt::format("cannot create the directory: {}", ec.message()));
  if (!fs::is_directory(dir)) deck.fail("output.dir", "exists and is not a directory");
  const std::string probe = (fs::path(dir) / fmt::format(".adi3d-write-test-{}", getpid())).string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) deck.fail("output.dir", fmt::format("cannot write in the directory: {}", std::strerror(errno)));
  std::fclose(f);
  std::remove(probe.c_str());
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp, std::strerror(errno)));
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size() &&
                  std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: write failed: {}", tmp, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", path, std::strerror(rename_err)));
  }
}

}  // namespace adi3d::app
