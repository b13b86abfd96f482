// The memory_snapshot sink's keys: declared once (schema()), read once
// (from_context()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "regiontrace/plugin.hpp"

namespace regiontrace::memory {

struct MemorySettings {
  bool track_allocations = false;
  std::int64_t max_tracked = 100000;
  std::vector<std::string> snapshot_on_exit;  // region names; "*" = every selected region
  std::int64_t snapshot_every_steps = 0;
  bool snapshot_on_exception = true;
  std::int64_t max_snapshots = 20;
  std::int64_t snapshot_max_allocations = 32;
  std::int64_t leak_min_steps = 3;
  std::int64_t leak_min_bytes = 1 << 20;
  bool rss = true;
  std::int64_t rss_interval_us = 1000;
  bool trace = true;
  std::int64_t queue_capacity = 16384;
  bool cuda_allocator_stats = true;
  bool cuda_record_history = false;
  std::int64_t cuda_history_entries = 100000;

  static SinkSchema schema();
  static MemorySettings from_context(const SinkContext& ctx);

  bool snapshot_on_exit_of(std::string_view region_name) const;
};

}  // namespace regiontrace::memory
