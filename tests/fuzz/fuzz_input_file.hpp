// The readers under test take a path, as the command line does: each input
// goes through a file of this process's own, rewritten per input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace regiontrace::fuzz {

inline const std::string& write_input_file(const char* suffix, const std::uint8_t* data,
                                           std::size_t size) {
  static const std::string path =
      "/tmp/regiontrace_fuzz_" + std::to_string(getpid()) + std::string(suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace regiontrace::fuzz
