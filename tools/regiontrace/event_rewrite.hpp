// How `regiontrace merge` rewrites one event as it copies it: the pid the
// merged trace gives its process, its ts moved to the common clock, its tid
// moved apart from the rank's other traces (its thread names marked with the
// trace's kind), flow ids moved apart from other inputs', global instants
// made process ones. Every other member is copied through as written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "event_fields.hpp"

namespace regiontrace::cli {

// What copying one input changes in each of its events.
struct EventRewrite {
  std::int64_t ts_offset_ns = 0;  // added to ts; 0 leaves ts as written
  std::size_t slot = 0;           // the input's place in the output: its flow ids' range
  std::int64_t tid_offset = 0;    // its threads moved apart from the rank's other traces
  std::string suffix;             // added to its thread names when moved
};

// Appends the event `fields` with `pid`, rewritten as `r` says; returns its
// tid once moved, when it has one. `thread_name`: a thread_name metadata
// event, whose name gets the suffix.
std::optional<std::int64_t> write_rewritten_event(std::string& o, const EventFields& fields,
                                                  std::int64_t pid, const EventRewrite& r,
                                                  bool instant, bool thread_name);

// A string's JSON escaping without the quotes, to join with escaped text.
std::string escaped_content(const std::string& text);

}  // namespace regiontrace::cli
