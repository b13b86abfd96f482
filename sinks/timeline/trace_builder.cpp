#include "trace_builder.hpp"

#include <algorithm>
#include <cstring>

#include "event_format.hpp"
#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "spill_file.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

class Emitter {
 public:
  Emitter(const TraceInput& in, sdk::BackgroundGzipWriter& out, TraceTotals& totals)
      : in_(in),
        trace_(
            [this, &out](std::string_view text) {
              block_.assign(text);
              out.take(block_);
            },
            kFlushBytes),
        format_(in.region_names, in.span_prefix, in.context->pid(), in.base_ns),
        totals_(totals) {
    totals_ = TraceTotals{};
  }

  void header() {
    json::Writer& doc = trace_.begin_document();
    doc.key("regiontrace").begin_object();
    sdk::clock_sync::write_trace_members(doc, *in_.context, "timeline", in_.start_pair,
                                         in_.end_pair);
    doc.end_object();
    trace_.begin_events(in_.base_ns);
    format_.process_name(trace_.begin_event(), in_.context->rank());
    trace_.end_event();
  }

  void thread(const ThreadRecords& t) {
    format_.thread_name(trace_.begin_event(), t.os_tid, t.name);
    trace_.end_event();
    paths_.clear();
    for (const OpenSpan& o : t.open) {
      if (o.depth < 0 || o.depth >= kMaxSpanDepth) continue;
      if (after_cut(o.begin_ns)) continue;  // not an event yet: not counted
      paths_.enter(o.depth, o.begin_ns, in_.end_ns, o.region);
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
      if (std::find(tracks.begin(), tracks.end(), s.os_tid) == tracks.end()) {
        tracks.push_back(s.os_tid);
        format_.thread_name(trace_.begin_event(), s.os_tid + kStepTrackOffset, "steps");
        trace_.end_event();
      }
      format_.step(trace_.begin_event(), s.os_tid, s.step, s.time_ns, end);
      trace_.end_event();
      ++totals_.steps;
    }
  }

  void finish() {
    trace_.end_events().key("timeline").raw_value(in_.statistics(totals_));
    trace_.end_document();
  }

 private:
  bool after_cut(std::int64_t ns) const { return in_.cut && ns > in_.end_ns; }

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
      paths_.enter(r.depth, r.begin_ns, r.end_ns, r.id);
      region_span(tid, r.id, r.depth, r.begin_ns, r.end_ns, r.step, r.unwinding != 0, running);
      return;
    }
    MarkRecord m;
    std::memcpy(&m, p, sizeof(m));
    if (after_cut(m.time_ns)) {
      ++totals_.cut;
      return;
    }
    format_.mark(trace_.begin_event(), tid, p);
    trace_.end_event();
    ++totals_.marks;
  }

  void region_span(long tid, std::uint32_t region, int depth, std::int64_t begin, std::int64_t end,
                   std::int64_t step, bool unwinding, bool open_at_end) {
    const std::string& path = paths_.path(format_, depth, begin, end, region);
    format_.region(trace_.begin_event(), tid, region, depth, begin, end, step, path, unwinding,
                   open_at_end);
    trace_.end_event();
    if (!open_at_end) ++totals_.regions;
  }

  const TraceInput& in_;
  std::string block_;  // handed to the compressing thread
  sdk::ChromeTraceWriter trace_;
  EventFormat format_;
  SpanPaths paths_;
  TraceTotals& totals_;
};
}  // namespace

void write_trace(const TraceInput& in, sdk::BackgroundGzipWriter& out, TraceTotals& totals) {
  Emitter e(in, out, totals);
  e.header();
  for (const ThreadRecords& t : in.threads) e.thread(t);
  e.steps();
  e.finish();
}

}  // namespace regiontrace::timeline
