// libFuzzer target: the activation-trace JSONL reader behind `regiontrace
// diff`. Any input either loads or throws std::runtime_error naming file and
// line. The reader takes a path, as the command line does: the input goes
// through a file of this process's own.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "activation_records.hpp"

namespace {

const std::string& input_path() {
  static const std::string path =
      "/tmp/regiontrace_fuzz_activations_" + std::to_string(getpid()) + ".jsonl";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  regiontrace::cli::NamePool names;
  try {
    regiontrace::cli::ActivationTrace trace =
        regiontrace::cli::load_activation_trace(input_path(), names);
    volatile std::size_t n = trace.records.size();
    (void)n;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
