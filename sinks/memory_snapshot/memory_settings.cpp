#include "memory_settings.hpp"

#include <algorithm>

namespace regiontrace::memory {

SinkSchema MemorySettings::schema() {
  constexpr double kBig = 9.0e15;
  return {
      KeySpec::boolean("track_allocations", false,
                       "keep every live libtorch allocation (address, size, region path, step) "
                       "so snapshots say which regions own the memory still alive, and leak "
                       "detection attributes frees exactly"),
      KeySpec::integer("max_tracked", 100000,
                       "most live allocations kept with track_allocations; more are counted as "
                       "overflow")
          .range(1, 1.0e8),
      KeySpec::list("snapshot_on_exit", "",
                    "regions whose exit writes a snapshot (names; \"*\" = every selected region)"),
      KeySpec::integer("snapshot_every_steps", 0,
                       "write a snapshot when the step becomes a multiple of N (0 = never)")
          .range(0, kBig),
      KeySpec::boolean(
          "snapshot_on_exception", true,
          "write a snapshot when a region is left by an exception (an OOM among them)"),
      KeySpec::integer("max_snapshots", 20, "most snapshots per run; later triggers are counted")
          .range(0, 1.0e6),
      KeySpec::integer("snapshot_max_allocations", 32,
                       "largest live allocations listed per region in a snapshot")
          .range(0, 1.0e6),
      KeySpec::integer("leak_min_steps", 3,
                       "steps a region must run in before it can be a leak suspect")
          .range(2, kBig),
      KeySpec::integer("leak_min_bytes", 1 << 20,
                       "growth of held bytes (last step minus first) that makes a leak suspect")
          .range(1, kBig),
      KeySpec::boolean("rss", true,
                       "record the resident set and its high-water mark at every region exit"),
      // A reading costs a pread of /proc/self/statm and a getrusage (~1-2 us,
      // several times a whole region pair); the kernel's own RSS counters
      // are folded in from per-thread (per-CPU) caches in batches anyway.
      KeySpec::integer("rss_interval_us", 1000,
                       "reuse an RSS reading younger than this many microseconds (0 = read at "
                       "every exit; a read costs ~1-2 us)")
          .range(0, 1.0e9),
      KeySpec::boolean("trace", true,
                       "write a Chrome trace with the region spans and memory counter tracks"),
      KeySpec::integer("queue_capacity", 16384,
                       "region records waiting for the writer thread; more are dropped and counted")
          .range(16, 1.0e7),
      KeySpec::boolean("cuda_allocator_stats", true,
                       "CUDA builds: add the caching allocator's allocated/reserved/active "
                       "figures to every record"),
      KeySpec::boolean("cuda_record_history", false,
                       "CUDA builds: record allocation history (_record_memory_history) so "
                       "pickled snapshots show where memory came from"),
      KeySpec::integer("cuda_history_entries", 100000, "CUDA builds: allocation history length")
          .range(1, 1.0e9),
  };
}

MemorySettings MemorySettings::from_context(const SinkContext& ctx) {
  MemorySettings s;
  s.track_allocations = ctx.get_bool("track_allocations");
  s.max_tracked = ctx.get_int("max_tracked");
  s.snapshot_on_exit = ctx.get_list("snapshot_on_exit");
  s.snapshot_every_steps = ctx.get_int("snapshot_every_steps");
  s.snapshot_on_exception = ctx.get_bool("snapshot_on_exception");
  s.max_snapshots = ctx.get_int("max_snapshots");
  s.snapshot_max_allocations = ctx.get_int("snapshot_max_allocations");
  s.leak_min_steps = ctx.get_int("leak_min_steps");
  s.leak_min_bytes = ctx.get_int("leak_min_bytes");
  s.rss = ctx.get_bool("rss");
  s.rss_interval_us = ctx.get_int("rss_interval_us");
  s.trace = ctx.get_bool("trace");
  s.queue_capacity = ctx.get_int("queue_capacity");
  s.cuda_allocator_stats = ctx.get_bool("cuda_allocator_stats");
  s.cuda_record_history = ctx.get_bool("cuda_record_history");
  s.cuda_history_entries = ctx.get_int("cuda_history_entries");
  return s;
}

bool MemorySettings::snapshot_on_exit_of(std::string_view region_name) const {
  return std::any_of(snapshot_on_exit.begin(), snapshot_on_exit.end(), [&](const std::string& n) {
    // Short names of the seed's catalog resolve like in region filters.
    return n == "*" || n == region_name || ("profiler_region_" + n) == region_name;
  });
}

}  // namespace regiontrace::memory
