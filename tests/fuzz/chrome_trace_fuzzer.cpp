// libFuzzer target: the Chrome/Perfetto trace reader behind `regiontrace
// summary` and `merge`, and the field helpers they read events with. Any
// input either loads or throws std::runtime_error naming the file.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "chrome_trace_reader.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = regiontrace::fuzz::write_input_file("_trace.json", data, size);
  try {
    const regiontrace::cli::ChromeTrace trace = regiontrace::cli::ChromeTrace::load(path);
    std::size_t fields = 0;
    for (simdjson::dom::element element : trace.events()) {
      simdjson::dom::object event;
      if (element.get(event)) continue;
      fields += regiontrace::cli::string_field(event, "name").has_value();
      fields += regiontrace::cli::string_field(event, "ph").has_value();
      fields += regiontrace::cli::number_field(event, "ts").has_value();
      fields += regiontrace::cli::number_field(event, "dur").has_value();
      fields += regiontrace::cli::integer_field(event, "pid").has_value();
      fields += regiontrace::cli::integer_field(event, "tid").has_value();
    }
    volatile std::size_t sink = fields;
    (void)sink;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
