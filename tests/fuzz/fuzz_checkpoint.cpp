// libFuzzer target: a file given to --restart (damaged, truncated or foreign). The input is
// the file's bytes; it is read and verified, or refused with a CheckpointError.
#include "input_file.hpp"
#include "io/checkpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = input_as_file(data, size, "fuzz_checkpoint");
  if (path.empty()) return 0;
  try {
    static_cast<void>(adi3d::io::read_checkpoint(path));
  } catch (const adi3d::io::CheckpointError&) {
  }
  return 0;
}
