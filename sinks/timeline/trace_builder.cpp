#include "trace_builder.hpp"

#include <algorithm>
#include <cstring>

#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "spill_file.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr long kStepTrackOffset = 1000000000;

class Emitter {
 public:
  Emitter(const TraceInput& in, GzipFile& out, TraceTotals& totals)
      : in_(in), out_(out), totals_(totals) {
    totals_ = TraceTotals{};
    escaped_.reserve(in.region_names.size());
    for (const std::string& name : in.region_names) {
      std::string e;
      json::append_escaped(e, name);  // with its quotes
      escaped_.push_back(e.substr(1, e.size() - 2));
    }
    std::string prefix;
    json::append_escaped(prefix, in.span_prefix);
    prefix_ = prefix.substr(1, prefix.size() - 2);
    pid_ = std::to_string(in.context->pid());
  }

  void header() {
    text_ += "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":";
    json::append_int(text_, in_.base_ns);
    text_ += ',';
    sdk::clock_sync::append_trace_metadata(text_, *in_.context, "timeline", in_.start_pair,
                                           in_.end_pair);
    text_ += ",\"traceEvents\":[";
    std::string process = "rank " + std::to_string(in_.context->rank()) + " (pid " + pid_ + ")";
    begin_event();
    text_ += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid_ + ",\"args\":{\"name\":";
    json::append_escaped(text_, process);
    text_ += "}}";
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
      begin_event();
      // Kineto's category for ProfilerStep#N: TensorBoard's profiler plugin
      // finds steps only there.
      text_ += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#";
      json::append_int(text_, s.step);
      text_ += "\",\"pid\":" + pid_ + ",\"tid\":";
      json::append_int(text_, tid);
      text_ += ",\"ts\":";
      json::append_microseconds(text_, s.time_ns - in_.base_ns);
      text_ += ",\"dur\":";
      json::append_microseconds(text_, std::max<std::int64_t>(0, end - s.time_ns));
      text_ += ",\"args\":{\"step\":";
      json::append_int(text_, s.step);
      text_ += "}}";
      ++totals_.steps;
      maybe_flush();
    }
  }

  void finish() {
    text_ += "],\"timeline\":";
    text_ += in_.statistics(totals_);
    text_ += "}\n";
    out_.take(text_);
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

  void begin_event() {
    if (!first_) text_ += ',';
    first_ = false;
    text_ += '\n';
  }

  void maybe_flush() {
    if (text_.size() < kFlushBytes) return;
    out_.take(text_);
  }

  void thread_name(long tid, const std::string& name) {
    begin_event();
    text_ += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + pid_ + ",\"tid\":";
    json::append_int(text_, tid);
    text_ += ",\"args\":{\"name\":";
    json::append_escaped(text_, name);
    text_ += "}}";
  }

  std::string_view name_of(std::uint32_t region) const {
    static const std::string unknown = "?";
    return region < escaped_.size() ? std::string_view(escaped_[region]) : unknown;
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
    begin_event();
    text_ += "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mark\",\"name\":";
    json::append_escaped(text_, std::string_view(text, m.name_length));
    text_ += ",\"pid\":" + pid_ + ",\"tid\":";
    json::append_int(text_, tid);
    text_ += ",\"ts\":";
    json::append_microseconds(text_, m.time_ns - in_.base_ns);
    text_ += ",\"args\":{\"path\":";
    json::append_escaped(text_, std::string_view(text + m.name_length, m.path_length));
    if (m.step != kNoStep) {
      text_ += ",\"step\":";
      json::append_int(text_, m.step);
    }
    text_ += "}}";
    ++totals_.marks;
    maybe_flush();
  }

  void region_span(long tid, std::uint32_t region, int depth, std::int64_t begin, std::int64_t end,
                   std::int64_t step, bool unwinding, bool open_at_end) {
    const std::string_view name = name_of(region);
    begin_event();
    text_ += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"";
    text_ += prefix_;
    text_ += name;
    text_ += "\",\"pid\":" + pid_ + ",\"tid\":";
    json::append_int(text_, tid);
    text_ += ",\"ts\":";
    json::append_microseconds(text_, begin - in_.base_ns);
    text_ += ",\"dur\":";
    json::append_microseconds(text_, std::max<std::int64_t>(0, end - begin));
    text_ += ",\"args\":{\"region\":\"";
    text_ += name;
    text_ += "\",\"path\":\"";
    for (int k = 0; k < depth && k < ThreadSlotDepth; ++k) {
      const Ancestor& a = stack_[static_cast<std::size_t>(k)];
      if (!a.valid || a.begin > begin || a.end < end) continue;
      text_ += name_of(a.region);
      text_ += '/';
    }
    text_ += name;
    text_ += "\",\"depth\":";
    json::append_int(text_, depth);
    if (step != kNoStep) {
      text_ += ",\"step\":";
      json::append_int(text_, step);
    }
    if (unwinding) text_ += ",\"unwinding\":true";
    if (open_at_end) text_ += ",\"open_at_end\":true";
    text_ += "}}";
    if (!open_at_end) ++totals_.regions;
    maybe_flush();
  }

  const TraceInput& in_;
  GzipFile& out_;
  std::vector<std::string> escaped_;
  std::string prefix_;
  std::string pid_;
  std::string text_;
  bool first_ = true;
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
