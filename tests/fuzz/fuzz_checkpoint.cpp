// libFuzzer target: a file given to --restart (damaged, truncated or foreign). The input is
// the file's bytes; it is read and verified, or refused with a CheckpointError.
#include "io/checkpoint.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/adi3d_fuzz_checkpoint_" + std::to_string(::getpid()) + ".h5";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    static_cast<void>(adi3d::io::read_checkpoint(path));
  } catch (const adi3d::io::CheckpointError&) {
  }
  return 0;
}
