// libFuzzer target: the Chrome/Perfetto trace reader behind `regiontrace
// summary` and `report` (TraceEventReader, its integer-nanosecond times) and
// what summary makes of it: spans, their steps (cut at step boundaries). Any input either reads or
// throws std::runtime_error naming the file.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_input_file.hpp"
#include "trace_spans.hpp"
#include "trace_summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = regiontrace::fuzz::write_input_file("_trace.json", data, size);
  try {
    const regiontrace::cli::TraceSpans spans = regiontrace::cli::read_trace_spans(path);
    regiontrace::cli::SummaryOptions options;
    options.by_step = true;
    const regiontrace::cli::TraceSummary summary =
        regiontrace::cli::summarize_spans(spans, options);
    volatile std::size_t sink = summary.spans + summary.steps.size();
    (void)sink;
  } catch (const std::runtime_error&) {
  }
  return 0;
}
