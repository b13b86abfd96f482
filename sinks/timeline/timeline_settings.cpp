#include "timeline_settings.hpp"

#include <stdexcept>

namespace regiontrace::timeline {

SinkSchema TimelineSettings::schema() {
  return {
      KeySpec::integer("buffer_mb", 64,
                       "MiB of event buffers shared by the application threads (64 KiB "
                       "chunks, 32 bytes a region); when the writer falls behind that far, "
                       "events are dropped and counted")
          .range(1, 65536),
      KeySpec::integer("max_events", 10000000,
                       "regions, marks and steps one run records at most; later ones are "
                       "dropped and counted")
          .range(1, 1e12),
      KeySpec::integer("max_mb", 1024,
                       "MiB of recorded events one run keeps at most (the writer's "
                       "temporary file; the .json.gz is smaller); later ones are dropped "
                       "and counted")
          .range(1, 1000000),
      KeySpec::string("span_prefix", "region::",
                      "region spans are named `<span_prefix><name>`, as the torch_profiler "
                      "sink names them"),
      KeySpec::boolean("flight_recorder", true,
                       "keep the trace file on disk while the program runs, updated every "
                       "flush_interval_s (a top-level key), so that a process killed by SIGKILL "
                       "or ended by os._exit() leaves a trace that opens, marked incomplete; "
                       "false: the trace is written at shutdown only"),
  };
}

TimelineSettings TimelineSettings::from(const SinkContext& ctx) {
  TimelineSettings s;
  s.buffer_bytes = static_cast<std::uint64_t>(ctx.get_int("buffer_mb")) << 20;
  s.max_events = static_cast<std::uint64_t>(ctx.get_int("max_events"));
  s.max_bytes = static_cast<std::uint64_t>(ctx.get_int("max_mb")) << 20;
  s.span_prefix = ctx.get_string("span_prefix");
  s.flight_recorder = ctx.get_bool("flight_recorder");
  if (s.buffer_bytes == 0 || s.max_events == 0 || s.max_bytes == 0) {
    throw std::invalid_argument(
        "buffer_mb, max_events and max_mb must be at least 1 (defaults 64, 10000000, 1024)");
  }
  return s;
}

}  // namespace regiontrace::timeline
