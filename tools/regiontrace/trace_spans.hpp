// The spans of one Chrome trace, read once (TraceEventReader) and nested:
// the model `summary` aggregates (trace_summary.hpp) and cuts at step
// boundaries (step_cut.hpp).
//
// - Spans are complete events (ph X with ts and dur) and matched B/E pairs on
//   one thread, in integer nanoseconds. Self time is computed by the rule of
//   regiontrace/sdk/span_nesting.hpp (the torch_profiler sink's summary uses
//   the same), per thread (pid, tid).
// - Region spans follow the conventions every regiontrace sink uses, whoever
//   wrote them: args.region, or a name `<prefix>.region::<name>` /
//   `region::<name>` (torch_profiler, timeline), or category "region" (the
//   memory_snapshot sink's counter trace). They are named by region.
// - Step spans (ProfilerStep#N, step_span.hpp) are not ops: they are kept per
//   process, to give the step of the spans they contain.
// - GPU work (category "kernel" or "gpu_*") is a group of its own, since it
//   runs concurrently. "gpu_user_annotation" spans, Kineto's copies of CPU
//   annotations on the GPU timeline, are left out so regions do not count
//   twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace regiontrace::cli {

enum class SpanGroup : std::uint8_t { kRegion, kOp, kGpu };

inline constexpr std::int64_t kNoStep = INT64_MIN;
inline constexpr std::uint32_t kNoPath = UINT32_MAX;

// About 48 bytes: a trace's spans are held, not its text.
struct Span {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t self_ns = 0;
  std::int64_t step = kNoStep;   // args.step
  std::uint32_t name = 0;        // index into TraceSpans::names
  std::uint32_t path = kNoPath;  // args.path, index into TraceSpans::paths
  bool region = false;
  bool paired = false;  // from a B/E pair, whose args are not read
};

struct SpanName {
  std::string name;      // the region's name for region spans
  std::string category;  // of the first span seen with this name
  SpanGroup group = SpanGroup::kOp;
};

struct StepSpan {
  std::int64_t ts_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = 0;
};

struct TraceSpans {
  std::size_t events = 0;
  std::size_t spans = 0;
  std::size_t processes = 0;
  std::size_t unmatched = 0;  // B without E or E without B
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;  // end of the latest span or event
  std::vector<SpanName> names;
  std::vector<std::string> paths;
  // Per thread, in the order threads first appear; spans in file order
  // (a B/E pair at its E), self_ns set.
  std::vector<std::vector<Span>> threads;
  std::vector<std::string> thread_pid;                      // thread index -> pid (JSON text)
  std::map<std::string, std::vector<StepSpan>> step_spans;  // pid -> its step spans
  std::string unfinished;                                   // unfinished_note() of the file
};

// Reads `path` one event at a time: memory holds the spans, not the
// document. Throws std::runtime_error naming the file for what is no trace.
TraceSpans read_trace_spans(const std::string& path);

// Sets each span's self_ns by the nesting rule (one thread's spans).
void nest_spans(std::vector<Span>& spans);

// The step a span ran in: its own, else that of its process's step span
// holding its start; kNoStep when neither.
std::int64_t step_of(const TraceSpans& trace, std::size_t thread, const Span& span);

}  // namespace regiontrace::cli
