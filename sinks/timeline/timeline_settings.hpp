// The timeline sink's keys (besides the host's enabled/regions/steps/ranks/
// output_dir), checked once at start-up.
#pragma once

#include <cstdint>
#include <string>

#include "regiontrace/plugin.hpp"

namespace regiontrace::timeline {

struct TimelineSettings {
  // Memory the application threads may fill before the writer thread has
  // drained it; past it, events are dropped and counted.
  std::uint64_t buffer_bytes = 0;
  // What one run records at most; past either cap, events are dropped and
  // counted (a long run cannot fill the disk).
  std::uint64_t max_events = 0;
  std::uint64_t max_bytes = 0;
  std::string span_prefix;
  // Keep the trace on disk while the program runs (flight_recorder.hpp).
  bool flight_recorder = true;

  static SinkSchema schema();
  // Throws std::invalid_argument naming the key.
  static TimelineSettings from(const SinkContext& ctx);
};

}  // namespace regiontrace::timeline
