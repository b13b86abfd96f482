#include "chrome_trace_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "host_name.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/span_nesting.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "slice_times.hpp"

namespace regiontrace::torch_profiler {
namespace {

namespace json = regiontrace::json;

// Trace metadata written after the events is kept below this size, so the
// byte limit can be checked before it is known exactly.
constexpr std::uint64_t kTailReserve = 4096;

class EventFormatter {
 public:
  EventFormatter(const TraceData& data, std::int64_t base_ns) : data_(data), base_(base_ns) {}

  void header(std::string& out, std::string_view ph, std::string_view cat, std::string_view name,
              std::uint64_t tid, std::int64_t ts_ns) const {
    out += "{\"ph\":\"";
    out.append(ph);
    out += "\",\"cat\":\"";
    out.append(cat);
    out += "\",\"name\":";
    json::append_escaped(out, name);
    out += ",\"pid\":";
    json::append_int(out, data_.pid);
    out += ",\"tid\":";
    json::append_uint(out, tid);
    out += ",\"ts\":";
    json::append_microseconds(out, ts_ns - base_);
  }

  void op(std::string& out, const OpRecord& op, std::int64_t start_ns, std::int64_t end_ns,
          std::int64_t memory_delta) const {
    if (op.kind == OpRecord::Kind::kMemory) {
      header(out, "i", "cpu_instant_event", op.name, op.thread, op.start_ns);
      out += ",\"s\":\"t\",\"args\":{\"Bytes\":";
      json::append_int(out, op.bytes);
      out += ",\"Device Type\":";
      json::append_int(out, op.device_type);
      out += ",\"Device Id\":";
      json::append_int(out, op.device_index);
      out += "}}";
      return;
    }
    header(out, "X", trace_category(op), op.name, op.thread, start_ns);
    out += ",\"dur\":";
    json::append_microseconds(out, end_ns - start_ns);
    out += ",\"args\":{";
    bool first = true;
    auto key = [&](const char* k) {
      if (!first) out += ',';
      first = false;
      out += '"';
      out += k;
      out += "\":";
    };
    if (data_.record_shapes && op.has_shapes) {
      key("Input Dims");
      out += '[';
      for (std::size_t i = 0; i < op.shapes.size(); ++i) {
        if (i) out += ',';
        out += '[';
        for (std::size_t j = 0; j < op.shapes[i].size(); ++j) {
          if (j) out += ',';
          json::append_int(out, op.shapes[i][j]);
        }
        out += ']';
      }
      out += ']';
      key("Input type");
      out += '[';
      for (std::size_t i = 0; i < op.dtypes.size(); ++i) {
        if (i) out += ',';
        json::append_escaped(out, op.dtypes[i]);
      }
      out += ']';
    }
    if (data_.with_flops && op.flops > 0) {
      key("flops");
      json::append_uint(out, op.flops);
    }
    if (data_.with_stack && !op.stack.empty()) {
      std::string joined;
      for (const std::string& frame : op.stack) joined += (joined.empty() ? "" : ";") + frame;
      key("Call stack");
      json::append_escaped(out, joined);
    }
    if (data_.profile_memory && op.kind == OpRecord::Kind::kCpuOp) {
      key("Memory Delta (bytes)");
      json::append_int(out, memory_delta);
    }
    if (op.sequence_nr >= 0) {
      key("Sequence number");
      json::append_int(out, op.sequence_nr);
      key("Fwd thread id");
      json::append_uint(out, op.fwd_thread);
    }
    if (op.kind == OpRecord::Kind::kDevice) {
      key("device");
      json::append_int(out, op.device_index);
      key("stream");
      json::append_int(out, op.stream);
    }
    // Kineto's names for the links: a kernel and the runtime call that
    // launched it share a correlation id; both name their op's External id.
    if (op.correlation_id != 0) {
      key("correlation");
      json::append_uint(out, op.correlation_id);
    }
    if (op.external_id != 0) {
      key("External id");
      json::append_uint(out, op.external_id);
    }
    if (op.event_index >= 0) {
      key("Ev Idx");
      json::append_int(out, op.event_index);
    }
    out += "}}";
  }

  void span(std::string& out, const RegionSpan& s, std::int64_t start_ns,
            std::int64_t end_ns) const {
    header(out, "X", "user_annotation", data_.span_name(s.region), s.thread, start_ns);
    out += ",\"dur\":";
    json::append_microseconds(out, end_ns - start_ns);
    out += ",\"args\":{\"region\":";
    json::append_escaped(out, data_.region_name(s.region));
    out += ",\"path\":";
    json::append_escaped(out, s.path);
    out += ",\"depth\":";
    json::append_int(out, s.depth);
    if (s.has_step) {
      out += ",\"step\":";
      json::append_int(out, s.step);
    }
    if (s.unwinding) out += ",\"unwinding\":true";
    if (s.clipped_begin) out += ",\"clipped_begin\":true";
    if (s.open_at_end) out += ",\"open_at_end\":true";
    out += "}}";
  }

  void step(std::string& out, const StepSpan& s) const {
    header(out, "X", "user_annotation", "ProfilerStep#" + std::to_string(s.step),
           s.thread + kStepTrackOffset, s.start_ns);
    out += ",\"dur\":";
    json::append_microseconds(out, std::max<std::int64_t>(0, s.end_ns - s.start_ns));
    out += ",\"args\":{\"step\":";
    json::append_int(out, s.step);
    if (s.clipped_begin) out += ",\"clipped_begin\":true";
    if (s.open_at_end) out += ",\"open_at_end\":true";
    out += "}}";
  }

  void marker(std::string& out, const CollectionMarker& m) const {
    const std::string name =
        data_.prefix + (m.enable ? ".profiler.enable_collection" : ".profiler.disable_collection");
    header(out, "i", "user_annotation", name, m.thread, m.time_ns);
    out += ",\"s\":\"t\",\"args\":{\"reason\":";
    json::append_escaped(out, m.reason);
    out += "}}";
  }

  void names(std::string& out, bool process, std::int64_t* count) const {
    auto meta = [&](const char* what, std::uint64_t tid, const std::string& value) {
      if (!out.empty()) out += ',';
      out += "{\"ph\":\"M\",\"name\":\"";
      out += what;
      out += "\",\"pid\":";
      json::append_int(out, data_.pid);
      out += ",\"tid\":";
      json::append_uint(out, tid);
      out += ",\"args\":{\"name\":";
      json::append_escaped(out, value);
      out += "}}";
      ++*count;
    };
    if (process)
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
  return base - (base % 1000 + 1000) % 1000;
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
void append_device_properties(std::string& buf, const std::vector<DeviceProperties>& devices) {
  buf += "\"deviceProperties\":[";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceProperties& d = devices[i];
    if (i != 0) buf += ',';
    json::Writer w(buf);
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
  buf += ']';
}

void append_kineto_metadata(std::string& buf, const TraceData& data) {
  buf += "{\"schemaVersion\":1,";
  append_device_properties(buf, data.devices);
  buf += ",\"trace_id\":\"";
  buf += trace_id();
  buf += "\",\"distributedInfo\":{\"rank\": ";
  json::append_int(buf, data.rank);
  buf += ", \"world_size\": ";
  json::append_int(buf, data.world_size);
  buf += "},\"host_name\":";
  json::append_escaped(buf, host_name());
}

// The trace's "regiontrace" member and the document's end: the members
// every sink writes (sink, ranks, pid, clockSync) first, then this sink's.
void append_regiontrace_member(std::string& buf, const TraceData& data,
                               const TraceWriteStats& stats, std::int64_t base) {
  const SinkContext context("torch_profiler", "", data.rank, data.local_rank, data.world_size,
                            data.pid, nullptr);
  sdk::clock_sync::append_trace_metadata(buf, context, "torch_profiler", data.clock_start,
                                         data.clock_end);
  buf.pop_back();  // the member's closing brace: this sink's own members follow
  buf += ",\"prefix\":";
  json::append_escaped(buf, data.prefix);
  buf += ",\"torch_version\":";
  json::append_escaped(buf, data.torch_version);
  buf += ",\"source\":\"ProfilerResult::events\"";
  if (data.has_steps) {
    buf += ",\"steps\":{\"first\":";
    json::append_int(buf, data.first_step);
    buf += ",\"last\":";
    json::append_int(buf, data.last_step);
    buf += '}';
  }
  buf += ",\"record_shapes\":";
  buf += data.record_shapes ? "true" : "false";
  if (data.shapes_for_flops) buf += ",\"record_shapes_because\":\"with_flops\"";
  buf += ",\"profile_memory\":";
  buf += data.profile_memory ? "true" : "false";
  buf += ",\"with_stack\":";
  buf += data.with_stack ? "true" : "false";
  buf += ",\"with_flops\":";
  buf += data.with_flops ? "true" : "false";
  buf += ",\"events\":";
  json::append_int(buf, stats.events_written);
  buf += ",\"cut\":";
  if (stats.cut_reason.empty() && data.cap_reason.empty()) {
    buf += "null";
  } else {
    buf += "{\"reason\":";
    json::append_escaped(buf, stats.cut_reason.empty() ? data.cap_reason : stats.cut_reason);
    buf += ",\"events_left_out\":";
    json::append_int(buf, stats.events_cut);
    buf += ",\"op_calls_not_recorded\":";
    json::append_int(buf, data.ops_refused);
    if (!stats.cut_reason.empty()) {
      buf += ",\"cut_at_us\":";
      json::append_microseconds(buf, stats.cut_at_ns - base);
    }
    buf += '}';
  }
  buf += "}}\n";
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

  std::string buf;
  buf.reserve(1 << 20);
  append_kineto_metadata(buf, data);
  buf += ",\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":";
  json::append_int(buf, base - data.realtime_minus_monotonic_ns);
  buf += ",\"traceEvents\":[";
  std::int64_t names = 0;
  std::string meta;
  fmt.names(meta, true, &names);
  buf += meta;
  std::uint64_t bytes = buf.size();
  bool any = !meta.empty();

  const std::vector<Entry> entries = ordered_entries(data, written);
  // Collection markers are never cut: they say where collection stopped,
  // which a cut trace needs most. Their room is kept aside.
  std::int64_t markers_left = static_cast<std::int64_t>(data.markers.size());
  std::uint64_t marker_bytes = 0;
  std::string one;
  for (const CollectionMarker& m : data.markers) {
    one.assign(1, ',');
    fmt.marker(one, m);
    marker_bytes += one.size();
  }
  bool cut = false;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    if (cut && e.family != kMarker) continue;
    one.clear();
    if (any) one += ',';
    if (e.family == kStep) {
      fmt.step(one, data.steps[e.index]);
    } else if (e.family == kSpan) {
      fmt.span(one, data.spans[e.index], written.span_start[e.index], written.span_end[e.index]);
    } else if (e.family == kMarker) {
      fmt.marker(one, data.markers[e.index]);
      --markers_left;
      marker_bytes -= std::min<std::uint64_t>(marker_bytes, one.size() + (any ? 0 : 1));
    } else {
      fmt.op(one, data.ops[e.index], written.op_start[e.index], written.op_end[e.index],
             deltas.empty() ? 0 : deltas[e.index]);
    }
    if (e.family != kMarker) {
      const bool over_count =
          limits.max_events > 0 && stats.events_written + markers_left >= limits.max_events;
      const bool over_bytes =
          limits.max_bytes > 0 &&
          bytes + one.size() + marker_bytes + kTailReserve + data.trace_name.size() >
              limits.max_bytes;
      if (over_count || over_bytes) {
        stats.cut_reason = over_count ? "max_events" : "max_trace_mb";
        stats.events_cut = static_cast<std::int64_t>(entries.size() - k) - markers_left;
        stats.cut_at_ns = e.ts;
        cut = true;
        continue;
      }
    }
    buf += one;
    bytes += one.size();
    any = true;
    ++stats.events_written;
    if (buf.size() > (1u << 20)) {
      out.write(buf);
      buf.clear();
    }
  }

  buf += "],\"traceName\":";
  json::append_escaped(buf, data.trace_name);
  buf += ',';
  append_regiontrace_member(buf, data, stats, base);
  out.write(buf);
  stats.bytes = out.bytes_in();
  return stats;
}

}  // namespace regiontrace::torch_profiler
