// libFuzzer target: the activation-trace JSONL reader behind `regiontrace
// diff`. Any input either loads or throws std::runtime_error naming file and
// line. The reader takes a path, as the command line does: the input goes
// through a file of this process's own.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "activation_records.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = regiontrace::fuzz::write_input_file("_activations.jsonl", data, size);
  regiontrace::cli::NamePool names;
  try {
    regiontrace::cli::ActivationTrace trace = regiontrace::cli::load_activation_trace(path, names);
    volatile std::size_t n = trace.records.size();
    (void)n;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
