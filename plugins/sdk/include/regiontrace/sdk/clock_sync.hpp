// Where a trace sits on the wall clock. Events are stamped with
// CLOCK_MONOTONIC, which starts anew on every host (and whose origin is the
// boot); a pair of (CLOCK_REALTIME, CLOCK_MONOTONIC) read together, once when
// a sink starts and once when it writes, lets `regiontrace merge` put ranks
// that started at different times, on different hosts, on one axis.
// Header-only, not part of the plugin ABI: nothing here crosses the boundary.
//
// Every trace regiontrace writes carries, at its top level:
//   "regiontrace": {"sink": "timeline", "rank": 0, "local_rank": 0,
//                   "world_size": 4, "pid": 1234, "host": "node7", "cpus": "0-15",
//                   "clockSync": {"start": {"realtime_ns": ..., "monotonic_ns": ...},
//                                 "end":   {"realtime_ns": ..., "monotonic_ns": ...}}}
// Wall time of a monotonic stamp t: t + (realtime_ns - monotonic_ns) of the
// nearer pair (the two differ by the drift between the clocks over the run).
//
// For tests only: REGIONTRACE_TEST_CLOCK_SHIFT_NS (a signed integer) is added
// to every CLOCK_REALTIME reading, so a test can run ranks whose hosts'
// clocks disagree, which is what `regiontrace merge --align-on` corrects.
#pragma once

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/sink_context.hpp"

namespace regiontrace::sdk::clock_sync {

struct Pair {
  std::int64_t realtime_ns = 0;
  std::int64_t monotonic_ns = 0;
};

inline std::int64_t read_clock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline std::int64_t test_shift_ns() {
  const char* v = std::getenv("REGIONTRACE_TEST_CLOCK_SHIFT_NS");
  return v != nullptr ? std::strtoll(v, nullptr, 10) : 0;
}

// The realtime reading is taken between two monotonic ones and paired with
// their midpoint: a preemption between the reads shows as a wide bracket,
// so the narrowest of a few tries is kept.
inline Pair read() {
  Pair best;
  std::int64_t best_width = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::int64_t before = read_clock(CLOCK_MONOTONIC);
    const std::int64_t real = read_clock(CLOCK_REALTIME);
    const std::int64_t after = read_clock(CLOCK_MONOTONIC);
    if (best_width < 0 || after - before < best_width) {
      best_width = after - before;
      best = {real, before + (after - before) / 2};
    }
  }
  best.realtime_ns += test_shift_ns();
  return best;
}

// The CPUs this process may run on, as Linux writes CPU lists ("0-3,8"):
// its affinity mask (what Slurm, a cpuset or taskset gave it). `regiontrace
// report` joins the lists of the ranks on one host: more ranks than CPUs in
// the union wait for each other, and their timings show the scheduler.
inline std::string cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
    if (last > cpu) out += '-' + std::to_string(last);
    cpu = last;
  }
  return out;
}

// The machine's name, as Kineto writes it into a trace's "host_name" and
// torch.profiler's tensorboard_trace_handler into a trace file's name.
inline std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

inline void write_pair(json::Writer& w, const Pair& p) {
  w.begin_object().field("realtime_ns", p.realtime_ns).field("monotonic_ns", p.monotonic_ns);
  w.end_object();
}

inline void append_pair(std::string& out, const Pair& p) {
  json::Writer w(out);
  write_pair(w, p);
}

// Which process of which run wrote a trace: what write_trace_members needs
// of a sink's context, so that a writer that has these values (a trace
// written after the sink's context is gone) need not build a context.
struct TraceOrigin {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  long pid = 0;
};

inline TraceOrigin origin_of(const SinkContext& context) {
  return {context.rank(), context.local_rank(), context.world_size(), context.pid()};
}

// The members of "regiontrace" that every sink writes, into the object `w`
// has open: a sink adds its own after them.
inline void write_trace_members(json::Writer& w, const TraceOrigin& origin, std::string_view sink,
                                const Pair& start, const Pair& end) {
  w.field("sink", sink)
      .field("rank", origin.rank)
      .field("local_rank", origin.local_rank)
      .field("world_size", origin.world_size)
      .field("pid", origin.pid)
      .field("host", host_name())
      .field("cpus", cpu_list());
  w.key("clockSync").begin_object().key("start");
  write_pair(w, start);
  w.key("end");
  write_pair(w, end);
  w.end_object();
}

inline void write_trace_members(json::Writer& w, const SinkContext& context, std::string_view sink,
                                const Pair& start, const Pair& end) {
  write_trace_members(w, origin_of(context), sink, start, end);
}

// Writes `"regiontrace":{...}` (the top-level member described above, no
// separator around it).
inline void append_trace_metadata(std::string& out, const SinkContext& context,
                                  std::string_view sink, const Pair& start, const Pair& end) {
  json::Writer w(out);
  w.key("regiontrace").begin_object();
  write_trace_members(w, context, sink, start, end);
  w.end_object();
}

}  // namespace regiontrace::sdk::clock_sync
