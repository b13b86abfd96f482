#include "torch_trace_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/span_nesting.hpp"
#include "regiontrace/sdk/trace_event.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "slice_times.hpp"

namespace regiontrace::torch_profiler {
namespace {

namespace json = regiontrace::json;

// Trace metadata written after the events is kept below this size, so the
// byte limit can be checked before it is known exactly.
constexpr std::uint64_t kTailReserve = 4096;

// The torch trace's events, in Kineto's names and members.
class EventFormatter {
 public:
  EventFormatter(const TraceData& data, std::int64_t base_ns) : data_(data), base_(base_ns) {}

  void op(std::string& out, const OpRecord& op, std::int64_t start_ns, std::int64_t end_ns,
          std::int64_t memory_delta) const {
    if (op.kind == OpRecord::Kind::kMemory) {
      sdk::TraceEvent e(out, base_, "i", "cpu_instant_event", op.name, data_.pid, op.thread);
      e.ts(op.start_ns).field("s", "t");
      e.args()
          .field("Bytes", op.bytes)
          .field("Device Type", op.device_type)
          .field("Device Id", op.device_index);
      e.end();
      return;
    }
    sdk::TraceEvent e(out, base_, "X", trace_category(op), op.name, data_.pid, op.thread);
    e.ts(start_ns).dur(end_ns - start_ns);
    json::Writer& args = e.args();
    if (data_.record_shapes && op.has_shapes) {
      args.key("Input Dims").begin_array();
      for (const auto& shape : op.shapes) {
        args.begin_array();
        for (const std::int64_t d : shape) args.value(d);
        args.end_array();
      }
      args.end_array().key("Input type").begin_array();
      for (const std::string& dtype : op.dtypes) args.value(dtype);
      args.end_array();
    }
    if (data_.with_flops && op.flops > 0) args.field("flops", op.flops);
    if (data_.with_stack && !op.stack.empty()) {
      std::string joined;
      for (const std::string& frame : op.stack) joined += (joined.empty() ? "" : ";") + frame;
      args.field("Call stack", joined);
    }
    if (data_.profile_memory && op.kind == OpRecord::Kind::kCpuOp) {
      args.field("Memory Delta (bytes)", memory_delta);
    }
    if (op.sequence_nr >= 0) {
      args.field("Sequence number", op.sequence_nr).field("Fwd thread id", op.fwd_thread);
    }
    if (op.kind == OpRecord::Kind::kDevice) {
      args.field("device", op.device_index).field("stream", op.stream);
    }
    // Kineto's names for the links: a kernel and the runtime call that
    // launched it share a correlation id; both name their op's External id.
    if (op.correlation_id != 0) args.field("correlation", op.correlation_id);
    if (op.external_id != 0) args.field("External id", op.external_id);
    if (op.event_index >= 0) args.field("Ev Idx", op.event_index);
    e.end();
  }

  void span(std::string& out, const RegionSpan& s, std::int64_t start_ns,
            std::int64_t end_ns) const {
    sdk::TraceEvent e(out, base_, "X", "user_annotation", data_.span_name(s.region), data_.pid,
                      s.thread);
    e.ts(start_ns).dur(end_ns - start_ns);
    json::Writer& args = e.args();
    args.field("region", data_.region_name(s.region)).field("path", s.path).field("depth", s.depth);
    if (s.has_step) args.field("step", s.step);
    if (s.unwinding) args.field("unwinding", true);
    if (s.clipped_begin) args.field("clipped_begin", true);
    if (s.open_at_end) args.field("open_at_end", true);
    e.end();
  }

  void step(std::string& out, const StepSpan& s) const {
    sdk::TraceEvent e(out, base_, "X", "user_annotation", "ProfilerStep#" + std::to_string(s.step),
                      data_.pid, s.thread + kStepTrackOffset);
    e.ts(s.start_ns).dur(std::max<std::int64_t>(0, s.end_ns - s.start_ns));
    json::Writer& args = e.args();
    args.field("step", s.step);
    if (s.clipped_begin) args.field("clipped_begin", true);
    if (s.open_at_end) args.field("open_at_end", true);
    e.end();
  }

  void marker(std::string& out, const CollectionMarker& m) const {
    const std::string name =
        data_.prefix + (m.enable ? ".profiler.enable_collection" : ".profiler.disable_collection");
    sdk::TraceEvent e(out, base_, "i", "user_annotation", name, data_.pid, m.thread);
    e.ts(m.time_ns).field("s", "t");
    e.args().field("reason", m.reason);
    e.end();
  }

  // The process's and its tracks' names.
  void names(sdk::ChromeTraceWriter& trace) const {
    auto meta = [&](const char* what, std::uint64_t tid, const std::string& value) {
      sdk::append_metadata_event(trace.begin_event(), what, data_.pid, tid, value);
      trace.end_event();
    };
    meta("process_name", 0,
         "rank " + std::to_string(data_.rank) + " (pid " + std::to_string(data_.pid) + ")");
    for (const ThreadInfo& t : data_.threads) meta("thread_name", t.tid, t.name);
    std::set<std::uint64_t> step_tracks;
    for (const StepSpan& s : data_.steps) step_tracks.insert(s.thread + kStepTrackOffset);
    for (const std::uint64_t tid : step_tracks) meta("thread_name", tid, "steps");
  }

 private:
  const TraceData& data_;
  std::int64_t base_;
};

// Inclusive allocation balance of every CPU op: the [memory] events made
// while it, or an op inside it, was the innermost op open on its thread.
// Ops nest by the rule the summaries use (regiontrace/sdk/span_nesting.hpp).
// libtorch 1.13 stamps in whole microseconds, so an op that ends and the
// next that starts often share a stamp with the memory events between them;
// there, a free goes to the op that ends (its temporaries go with it) and an
// allocation to the op that starts (its output comes first), not both to
// whichever window happens to contain the stamp.
std::vector<std::int64_t> memory_deltas(const TraceData& data) {
  const std::vector<OpRecord>& ops = data.ops;
  std::vector<std::int64_t> out(ops.size(), 0);
  constexpr std::size_t kNoOp = static_cast<std::size_t>(-1);
  struct Thread {
    std::vector<nesting::Span> spans;
    std::vector<std::size_t> op;                                // kNoOp: a region span
    std::vector<std::pair<std::int64_t, std::int64_t>> memory;  // time, bytes
  };
  std::map<std::uint64_t, Thread> threads;
  for (const RegionSpan& s : data.spans) {
    Thread& t = threads[s.thread];
    t.spans.push_back({s.start_ns, std::max(s.start_ns, s.end_ns), true});
    t.op.push_back(kNoOp);
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Thread& t = threads[ops[i].thread];
    if (ops[i].kind == OpRecord::Kind::kMemory) {
      t.memory.emplace_back(ops[i].start_ns, ops[i].bytes);
    } else if (ops[i].kind == OpRecord::Kind::kCpuOp) {
      t.spans.push_back({ops[i].start_ns, ops[i].start_ns + ops[i].duration_ns, false});
      t.op.push_back(i);
    }
  }
  for (auto& [tid, t] : threads) {
    if (t.memory.empty()) continue;
    const nesting::Nested n = nesting::nest(t.spans);
    const std::size_t count = t.spans.size();
    std::vector<int> depth(count, -1);
    auto depth_of = [&](std::size_t i) {
      int d = 0;
      for (std::size_t p = n.parent[i]; p != nesting::Nested::kNoParent; p = n.parent[p]) ++d;
      return d;
    };
    // The sweep: at one time, frees, then closes (inner first), then opens
    // (outer first), then allocations.
    struct Point {
      std::int64_t time;
      int phase;          // 0 free, 1 close, 2 open, 3 allocation
      int order;          // closes: -depth; opens: depth
      std::size_t index;  // span, or memory event
    };
    std::vector<Point> points;
    for (std::size_t i = 0; i < count; ++i) {
      if (n.clamped_end[i] <= n.clamped_start[i]) continue;  // holds no moment
      depth[i] = depth_of(i);
      points.push_back({n.clamped_start[i], 2, depth[i], i});
      points.push_back({n.clamped_end[i], 1, -depth[i], i});
    }
    for (std::size_t m = 0; m < t.memory.size(); ++m) {
      points.push_back({t.memory[m].first, t.memory[m].second < 0 ? 0 : 3, 0, m});
    }
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      if (a.time != b.time) return a.time < b.time;
      if (a.phase != b.phase) return a.phase < b.phase;
      if (a.order != b.order) return a.order < b.order;
      return a.index < b.index;
    });
    std::vector<std::int64_t> own(count, 0);
    std::vector<std::size_t> open;
    for (const Point& p : points) {
      if (p.phase == 2) {
        open.push_back(p.index);
      } else if (p.phase == 1) {
        open.erase(std::find(open.begin(), open.end(), p.index));
      } else if (!open.empty()) {
        own[open.back()] += t.memory[p.index].second;
      }
    }
    // Inclusive: children into parents, deepest first.
    std::vector<std::size_t> by_depth;
    for (std::size_t i = 0; i < count; ++i) by_depth.push_back(i);
    std::sort(by_depth.begin(), by_depth.end(),
              [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
    for (const std::size_t i : by_depth) {
      if (n.parent[i] != nesting::Nested::kNoParent) own[n.parent[i]] += own[i];
      if (t.op[i] != kNoOp) out[t.op[i]] = own[i];
    }
  }
  return out;
}

// File order: by start; among equal starts steps, then region spans, then
// markers, then ops (a span opens before the ops inside it), the longer first.
enum Family : std::uint8_t { kStep = 0, kSpan = 1, kMarker = 2, kOp = 3 };

struct Entry {
  std::int64_t ts;
  std::int64_t dur;
  Family family;
  std::size_t index;
};

std::vector<Entry> ordered_entries(const TraceData& data, const SliceTimes& w) {
  std::vector<Entry> e;
  e.reserve(data.ops.size() + data.spans.size() + data.markers.size() + data.steps.size());
  for (std::size_t i = 0; i < data.steps.size(); ++i) {
    e.push_back({data.steps[i].start_ns, data.steps[i].end_ns - data.steps[i].start_ns, kStep, i});
  }
  for (std::size_t i = 0; i < data.spans.size(); ++i) {
    e.push_back({w.span_start[i], w.span_end[i] - w.span_start[i], kSpan, i});
  }
  for (std::size_t i = 0; i < data.markers.size(); ++i) {
    e.push_back({data.markers[i].time_ns, 0, kMarker, i});
  }
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    e.push_back({w.op_start[i], w.op_end[i] - w.op_start[i], kOp, i});
  }
  std::stable_sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.family != b.family) return a.family < b.family;
    return a.dur > b.dur;
  });
  return e;
}

std::int64_t earliest(const TraceData& data, const SliceTimes& w) {
  std::int64_t base = std::numeric_limits<std::int64_t>::max();
  for (const std::int64_t t : w.span_start) base = std::min(base, t);
  for (const auto& m : data.markers) base = std::min(base, m.time_ns);
  for (const std::int64_t t : w.op_start) base = std::min(base, t);
  for (const auto& s : data.steps) base = std::min(base, s.start_ns);
  if (base == std::numeric_limits<std::int64_t>::max()) return 0;
  // On a whole microsecond of the epoch clock: libtorch 1.x stamps ops in
  // whole microseconds, so their ts and dur are integers, which viewers add
  // exactly in doubles; a child that ends with its parent then ends with it
  // on screen too, not an ulp after it.
  return base - (base % sdk::units::kNsPerUs + sdk::units::kNsPerUs) % sdk::units::kNsPerUs;
}

// Kineto's trace_id: 32 hex digits, new for every trace.
std::string trace_id() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof(word), "%08X", static_cast<unsigned>(rd()));
    id += word;
  }
  return id;
}

// The document's start: the members Kineto writes before traceEvents, in its
// order. distributedInfo is spaced as Python's json.dumps writes it (Kineto
// gets it from torch.profiler that way): HolisticTraceAnalysis takes a
// trace's rank from the first match of `"rank":\s+(\d+)` in the file, and
// finds none in compact JSON. Nothing before it has such a match. There is
// no "backend": the process group is the program's, not regiontrace's.
// deviceProperties lists the GPUs with Kineto's names when CUDA activity was
// collected (the sink reads them), and is empty otherwise, as Kineto's.
void write_device_properties(json::Writer& w, const std::vector<DeviceProperties>& devices) {
  w.key("deviceProperties").begin_array();
  for (const DeviceProperties& d : devices) {
    w.begin_object()
        .field("id", d.id)
        .field("name", d.name)
        .field("totalGlobalMem", d.total_global_mem)
        .field("computeMajor", d.compute_major)
        .field("computeMinor", d.compute_minor)
        .field("maxThreadsPerBlock", d.max_threads_per_block)
        .field("maxThreadsPerMultiprocessor", d.max_threads_per_multiprocessor)
        .field("regsPerBlock", d.regs_per_block)
        .field("warpSize", d.warp_size)
        .field("sharedMemPerBlock", d.shared_mem_per_block)
        .field("numSms", d.num_sms)
        .field("regsPerMultiprocessor", d.regs_per_multiprocessor)
        .field("sharedMemPerBlockOptin", d.shared_mem_per_block_optin)
        .field("sharedMemPerMultiprocessor", d.shared_mem_per_multiprocessor)
        .end_object();
  }
  w.end_array();
}

void write_kineto_metadata(json::Writer& w, const TraceData& data) {
  write_device_properties(w, data.devices);
  std::string distributed = "{\"rank\": ";
  json::append_int(distributed, data.rank);
  distributed += ", \"world_size\": ";
  json::append_int(distributed, data.world_size);
  distributed += '}';
  w.field("trace_id", trace_id()).key("distributedInfo").raw_value(distributed);
  w.field("host_name", sdk::clock_sync::host_name());
}

// The trace's "regiontrace" member: the members every sink writes (sink,
// ranks, pid, clockSync) first, then this sink's.
void write_regiontrace_member(json::Writer& w, const TraceData& data, const TraceWriteStats& stats,
                              std::int64_t base) {
  const sdk::clock_sync::TraceOrigin origin{data.rank, data.local_rank, data.world_size, data.pid};
  w.key("regiontrace").begin_object();
  sdk::clock_sync::write_trace_members(w, origin, "torch_profiler", data.clock_start,
                                       data.clock_end);
  w.field("prefix", data.prefix)
      .field("torch_version", data.torch_version)
      .field("source", "ProfilerResult::events");
  if (data.has_steps) {
    w.key("steps").begin_object();
    w.field("first", data.first_step).field("last", data.last_step).end_object();
  }
  w.field("record_shapes", data.record_shapes);
  if (data.shapes_for_flops) w.field("record_shapes_because", "with_flops");
  w.field("profile_memory", data.profile_memory)
      .field("with_stack", data.with_stack)
      .field("with_flops", data.with_flops)
      .field("events", stats.events_written);
  w.key("cut");
  if (stats.cut_reason.empty() && data.cap_reason.empty()) {
    w.value(nullptr);
  } else {
    w.begin_object()
        .field("reason", stats.cut_reason.empty() ? data.cap_reason : stats.cut_reason)
        .field("events_left_out", stats.events_cut)
        .field("op_calls_not_recorded", data.ops_refused);
    if (!stats.cut_reason.empty()) {
      std::string at;
      json::append_microseconds(at, stats.cut_at_ns - base);
      w.key("cut_at_us").raw_value(at);
    }
    w.end_object();
  }
  w.end_object();
}

}  // namespace

TraceWriteStats write_chrome_trace(const TraceData& data, const TraceLimits& limits,
                                   TraceFile& out) {
  TraceWriteStats stats;
  // Slices as they nest (slice_times.hpp), not as libtorch stamped them:
  // integer nanoseconds, written exactly, so they nest in the file too.
  const SliceTimes written = slice_times(data);
  const std::int64_t base = earliest(data, written);
  const EventFormatter fmt(data, base);
  const std::vector<std::int64_t> deltas =
      data.profile_memory ? memory_deltas(data) : std::vector<std::int64_t>();

  sdk::ChromeTraceWriter trace([&out](std::string_view text) { out.write(text); });
  write_kineto_metadata(trace.begin_document(), data);
  trace.begin_events(base - data.realtime_minus_monotonic_ns);
  fmt.names(trace);

  const std::vector<Entry> entries = ordered_entries(data, written);
  // Collection markers are never cut: they say where collection stopped,
  // which a cut trace needs most. Their room is kept aside.
  std::int64_t markers_left = static_cast<std::int64_t>(data.markers.size());
  std::uint64_t marker_bytes = 0;
  std::string one;
  for (const CollectionMarker& m : data.markers) {
    one.clear();
    fmt.marker(one, m);
    marker_bytes += one.size() + trace.separator_bytes();
  }
  bool cut = false;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    if (cut && e.family != kMarker) continue;
    std::string& buf = trace.begin_event();
    if (e.family == kStep) {
      fmt.step(buf, data.steps[e.index]);
    } else if (e.family == kSpan) {
      fmt.span(buf, data.spans[e.index], written.span_start[e.index], written.span_end[e.index]);
    } else if (e.family == kMarker) {
      fmt.marker(buf, data.markers[e.index]);
      --markers_left;
      marker_bytes -= std::min<std::uint64_t>(marker_bytes, trace.event_bytes());
    } else {
      fmt.op(buf, data.ops[e.index], written.op_start[e.index], written.op_end[e.index],
             deltas.empty() ? 0 : deltas[e.index]);
    }
    if (e.family != kMarker) {
      const bool over_count =
          limits.max_events > 0 && stats.events_written + markers_left >= limits.max_events;
      const bool over_bytes =
          limits.max_bytes > 0 &&
          trace.bytes() + marker_bytes + kTailReserve + data.trace_name.size() > limits.max_bytes;
      if (over_count || over_bytes) {
        trace.cancel_event();
        stats.cut_reason = over_count ? "max_events" : "max_trace_mb";
        stats.events_cut = static_cast<std::int64_t>(entries.size() - k) - markers_left;
        stats.cut_at_ns = e.ts;
        cut = true;
        continue;
      }
    }
    trace.end_event();
    ++stats.events_written;
  }

  json::Writer& tail = trace.end_events();
  tail.field("traceName", data.trace_name);
  write_regiontrace_member(tail, data, stats, base);
  trace.end_document();
  stats.bytes = out.bytes_in();
  return stats;
}

}  // namespace regiontrace::torch_profiler
