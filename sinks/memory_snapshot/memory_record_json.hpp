// The JSON text of a region record (one line of memory_rank<r>_pid<p>.jsonl)
// and the small pieces the other outputs share. Schema: docs/memory.md.
#pragma once

#include <cstdint>
#include <string>

#include "memory_records.hpp"
#include "region_paths.hpp"

namespace regiontrace::memory {

// `null` for kNoStep, the number otherwise.
void append_step(std::string& out, std::int64_t step);
// A number, or `null` for -1 (a figure that could not be read).
void append_optional(std::string& out, std::int64_t value);
// `"cpu":{"allocated_bytes":N},...` for every device in `devices` (a mask).
void append_allocated_by_device(std::string& out, std::uint32_t devices,
                                const std::int64_t (&allocated)[kMaxDevices]);
// "allocator": {...} members for one CUDA device.
void append_allocator_stats(std::string& out, const cuda::AllocatorStats& s);
// The `tracking` object ({"enabled":..,"tracked":..,...}): the summary and
// every snapshot carry the same one.
void append_tracking(std::string& out, const TrackingStats& t);
// One JSON object and a newline.
void append_region_record(std::string& out, const RegionRecord& r, const RegionPaths& paths);

// What one of the pieces above appends, as a string: a json::Writer takes it
// whole with raw_value().
template <typename Append, typename... Args>
std::string formatted(Append append, const Args&... args) {
  std::string text;
  append(text, args...);
  return text;
}

}  // namespace regiontrace::memory
