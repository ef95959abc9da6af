#pragma once
// The fuzz input as a file, for readers that take a path: written to one file per target
// and process (rewritten for every input), whose path is returned; "" if it cannot be.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

inline std::string input_as_file(const std::uint8_t* data, std::size_t size, const char* target) {
  static const std::string path = std::string("/tmp/adi3d_") + target + "_" + std::to_string(::getpid()) + ".h5";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return "";
  const bool written = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && written ? path : "";
}
