#include "trace_builder.hpp"

#include <algorithm>
#include <cstring>

#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_event.hpp"
#include "spill_file.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr long kStepTrackOffset = 1000000000;

class Emitter {
 public:
  Emitter(const TraceInput& in, GzipFile& out, TraceTotals& totals)
      : in_(in),
        trace_(
            [this, &out](std::string_view text) {
              block_.assign(text);
              out.take(block_);
            },
            kFlushBytes),
        totals_(totals) {
    totals_ = TraceTotals{};
    span_names_.reserve(in.region_names.size());
    for (const std::string& name : in.region_names) span_names_.push_back(in.span_prefix + name);
    pid_ = in.context->pid();
  }

  void header() {
    json::Writer& doc = trace_.begin_document();
    doc.key("regiontrace").begin_object();
    sdk::clock_sync::write_trace_members(doc, *in_.context, "timeline", in_.start_pair,
                                         in_.end_pair);
    doc.end_object();
    trace_.begin_events(in_.base_ns);
    sdk::append_metadata_event(
        trace_.begin_event(), "process_name", pid_, 0,
        "rank " + std::to_string(in_.context->rank()) + " (pid " + std::to_string(pid_) + ")");
    trace_.end_event();
  }

  void thread(const ThreadRecords& t) {
    thread_name(t.os_tid, t.name);
    stack_.assign(ThreadSlotDepth, Ancestor{});
    for (const OpenSpan& o : t.open) {
      if (o.depth < 0 || o.depth >= ThreadSlotDepth) continue;
      if (after_cut(o.begin_ns)) continue;  // not an event yet: not counted
      stack_[static_cast<std::size_t>(o.depth)] = {o.begin_ns, in_.end_ns, o.region, true};
      region_span(t.os_tid, o.region, o.depth, o.begin_ns, in_.end_ns, o.step, false, true);
      ++totals_.open_at_end;
    }
    std::vector<unsigned char> buffer;
    std::vector<std::size_t> offsets;
    for (auto piece = t.pieces.rbegin(); piece != t.pieces.rend(); ++piece) {
      if (after_cut(piece->extent.earliest_ns)) {
        totals_.cut += piece->extent.records;  // its disk space may be given back
        continue;
      }
      const unsigned char* data = piece->memory;
      if (data == nullptr) {
        buffer.resize(piece->bytes);
        in_.spill->read(piece->spill_offset, buffer.data(), piece->bytes);
        data = buffer.data();
      }
      offsets.clear();
      for (std::size_t at = 0; at < piece->bytes; at += record_size(data + at)) {
        offsets.push_back(at);
      }
      for (auto at = offsets.rbegin(); at != offsets.rend(); ++at) record(t.os_tid, data + *at);
    }
  }

  void steps() {
    std::vector<StepMark> steps = in_.steps;
    std::stable_sort(steps.begin(), steps.end(),
                     [](const StepMark& a, const StepMark& b) { return a.time_ns < b.time_ns; });
    std::vector<long> tracks;
    while (!steps.empty() && after_cut(steps.back().time_ns)) {
      steps.pop_back();
      ++totals_.cut;
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const StepMark& s = steps[i];
      // Back-to-back steps 1 ns apart (docs/profiling.md): a viewer adding
      // ts and dur in doubles must not see one end after the next begins.
      const std::int64_t end = i + 1 < steps.size() ? steps[i + 1].time_ns - 1 : in_.end_ns;
      const long tid = s.os_tid + kStepTrackOffset;
      if (std::find(tracks.begin(), tracks.end(), tid) == tracks.end()) {
        tracks.push_back(tid);
        thread_name(tid, "steps");
      }
      // Kineto's category for ProfilerStep#N: TensorBoard's profiler plugin
      // finds steps only there.
      sdk::TraceEvent e(trace_.begin_event(), in_.base_ns, "X", "user_annotation",
                        "ProfilerStep#" + std::to_string(s.step), pid_,
                        static_cast<std::uint64_t>(tid));
      e.ts(s.time_ns).dur(std::max<std::int64_t>(0, end - s.time_ns));
      e.args().field("step", s.step);
      e.end();
      trace_.end_event();
      ++totals_.steps;
    }
  }

  void finish() {
    trace_.end_events().key("timeline").raw_value(in_.statistics(totals_));
    trace_.end_document();
  }

 private:
  static constexpr int ThreadSlotDepth = 256;
  struct Ancestor {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::uint32_t region = 0;
    bool valid = false;
  };

  bool after_cut(std::int64_t ns) const { return in_.cut && ns > in_.end_ns; }

  void thread_name(long tid, const std::string& name) {
    sdk::append_metadata_event(trace_.begin_event(), "thread_name", pid_,
                               static_cast<std::uint64_t>(tid), name);
    trace_.end_event();
  }

  const std::string& region_name(std::uint32_t region) const {
    static const std::string unknown = "?";
    return region < in_.region_names.size() ? in_.region_names[region] : unknown;
  }
  const std::string& span_name(std::uint32_t region) const {
    static const std::string unknown = "?";
    return region < span_names_.size() ? span_names_[region] : unknown;
  }

  void record(long tid, const unsigned char* p) {
    if (!is_mark(p)) {
      RegionRecord r;
      std::memcpy(&r, p, sizeof(r));
      if (after_cut(r.begin_ns)) {
        ++totals_.cut;
        return;
      }
      // Running at the cut: ends there, as a span open when a run stops.
      const bool running = after_cut(r.end_ns);
      if (running) {
        r.end_ns = in_.end_ns;
        ++totals_.open_at_end;
      }
      if (r.depth < ThreadSlotDepth) {
        stack_[r.depth] = {r.begin_ns, r.end_ns, r.id, true};
      }
      region_span(tid, r.id, r.depth, r.begin_ns, r.end_ns, r.step, r.unwinding != 0, running);
      return;
    }
    MarkRecord m;
    std::memcpy(&m, p, sizeof(m));
    if (after_cut(m.time_ns)) {
      ++totals_.cut;
      return;
    }
    const char* text = reinterpret_cast<const char*>(p + sizeof(MarkRecord));
    sdk::TraceEvent e(trace_.begin_event(), in_.base_ns, "i", "mark",
                      std::string_view(text, m.name_length), pid_, static_cast<std::uint64_t>(tid));
    e.ts(m.time_ns).field("s", "t");
    json::Writer& args = e.args();
    args.field("path", std::string_view(text + m.name_length, m.path_length));
    if (m.step != kNoStep) args.field("step", m.step);
    e.end();
    trace_.end_event();
    ++totals_.marks;
  }

  void region_span(long tid, std::uint32_t region, int depth, std::int64_t begin, std::int64_t end,
                   std::int64_t step, bool unwinding, bool open_at_end) {
    path_.clear();
    for (int k = 0; k < depth && k < ThreadSlotDepth; ++k) {
      const Ancestor& a = stack_[static_cast<std::size_t>(k)];
      if (!a.valid || a.begin > begin || a.end < end) continue;
      path_ += region_name(a.region);
      path_ += '/';
    }
    path_ += region_name(region);
    sdk::TraceEvent e(trace_.begin_event(), in_.base_ns, "X", "user_annotation", span_name(region),
                      pid_, static_cast<std::uint64_t>(tid));
    e.ts(begin).dur(std::max<std::int64_t>(0, end - begin));
    json::Writer& args = e.args();
    args.field("region", region_name(region)).field("path", path_).field("depth", depth);
    if (step != kNoStep) args.field("step", step);
    if (unwinding) args.field("unwinding", true);
    if (open_at_end) args.field("open_at_end", true);
    e.end();
    trace_.end_event();
    if (!open_at_end) ++totals_.regions;
  }

  const TraceInput& in_;
  std::string block_;  // handed to the compressing thread
  sdk::ChromeTraceWriter trace_;
  std::vector<std::string> span_names_;  // by RegionId, with the prefix
  long pid_ = 0;
  std::string path_;
  std::vector<Ancestor> stack_;
  TraceTotals& totals_;
};
}  // namespace

void write_trace(const TraceInput& in, GzipFile& out, TraceTotals& totals) {
  Emitter e(in, out, totals);
  e.header();
  for (const ThreadRecords& t : in.threads) e.thread(t);
  e.steps();
  e.finish();
}

}  // namespace regiontrace::timeline
