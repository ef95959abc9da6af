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

}  // namespace adi3d::app
