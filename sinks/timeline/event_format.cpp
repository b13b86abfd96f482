#include "event_format.hpp"

#include <algorithm>
#include <cstring>

#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_event.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {

EventFormat::EventFormat(const std::vector<std::string>& region_names,
                         const std::string& span_prefix, long pid, std::int64_t base_ns)
    : names_(region_names), pid_(pid), base_ns_(base_ns) {
  span_names_.reserve(region_names.size());
  for (const std::string& name : region_names) span_names_.push_back(span_prefix + name);
}

const std::string& EventFormat::region_name(std::uint32_t region) const {
  static const std::string unknown = "?";
  return region < names_.size() ? names_[region] : unknown;
}

void EventFormat::process_name(std::string& out, int rank) const {
  sdk::append_metadata_event(
      out, "process_name", pid_, 0,
      "rank " + std::to_string(rank) + " (pid " + std::to_string(pid_) + ")");
}

void EventFormat::thread_name(std::string& out, long tid, std::string_view name) const {
  sdk::append_metadata_event(out, "thread_name", pid_, static_cast<std::uint64_t>(tid), name);
}

void EventFormat::region(std::string& out, long tid, std::uint32_t region, int depth,
                         std::int64_t begin_ns, std::int64_t end_ns, std::int64_t step,
                         std::string_view path, bool unwinding, bool open_at_end) const {
  static const std::string unknown = "?";
  const std::string& name = region < span_names_.size() ? span_names_[region] : unknown;
  sdk::TraceEvent e(out, base_ns_, "X", "user_annotation", name, pid_,
                    static_cast<std::uint64_t>(tid));
  e.ts(begin_ns).dur(std::max<std::int64_t>(0, end_ns - begin_ns));
  json::Writer& args = e.args();
  args.field("region", region_name(region)).field("path", path).field("depth", depth);
  if (step != kNoStep) args.field("step", step);
  if (unwinding) args.field("unwinding", true);
  if (open_at_end) args.field("open_at_end", true);
  e.end();
}

void EventFormat::mark(std::string& out, long tid, const unsigned char* record) const {
  MarkRecord m;
  std::memcpy(&m, record, sizeof(m));
  const char* text = reinterpret_cast<const char*>(record + sizeof(MarkRecord));
  sdk::TraceEvent e(out, base_ns_, "i", "mark", std::string_view(text, m.name_length), pid_,
                    static_cast<std::uint64_t>(tid));
  e.ts(m.time_ns).field("s", "t");
  json::Writer& args = e.args();
  args.field("path", std::string_view(text + m.name_length, m.path_length));
  if (m.step != kNoStep) args.field("step", m.step);
  e.end();
}

void EventFormat::step(std::string& out, long os_tid, std::int64_t step, std::int64_t begin_ns,
                       std::int64_t end_ns) const {
  // Kineto's category for ProfilerStep#N: TensorBoard's profiler plugin
  // finds steps only there.
  sdk::TraceEvent e(out, base_ns_, "X", "user_annotation", "ProfilerStep#" + std::to_string(step),
                    pid_, static_cast<std::uint64_t>(os_tid + kStepTrackOffset));
  e.ts(begin_ns).dur(std::max<std::int64_t>(0, end_ns - begin_ns));
  e.args().field("step", step);
  e.end();
}

void SpanPaths::enter(int depth, std::int64_t begin_ns, std::int64_t end_ns, std::uint32_t region) {
  if (depth >= 0 && depth < kMaxSpanDepth) {
    stack_[static_cast<std::size_t>(depth)] = {begin_ns, end_ns, region, true};
  }
}

const std::string& SpanPaths::path(const EventFormat& format, int depth, std::int64_t begin_ns,
                                   std::int64_t end_ns, std::uint32_t region) {
  path_.clear();
  for (int k = 0; k < depth && k < kMaxSpanDepth; ++k) {
    const Ancestor& a = stack_[static_cast<std::size_t>(k)];
    if (!a.valid || a.begin > begin_ns || a.end < end_ns) continue;
    path_ += format.region_name(a.region);
    path_ += '/';
  }
  path_ += format.region_name(region);
  return path_;
}

}  // namespace regiontrace::timeline
