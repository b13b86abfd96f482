#include "flight_recorder.hpp"

#include <cstring>

#include "regiontrace/sdk/json_writer.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {

FlightRecorder::FlightRecorder(std::string path, const SinkContext& context,
                               std::string span_prefix, std::int64_t base_ns,
                               sdk::clock_sync::Pair start_pair)
    : file_(std::move(path)),
      context_(context),
      span_prefix_(std::move(span_prefix)),
      base_ns_(base_ns),
      start_pair_(start_pair) {
  std::string head;
  json::Writer doc(head);
  doc.begin_object()
      .field("schemaVersion", 1)
      .field("displayTimeUnit", "ms")
      .field("baseTimeNanoseconds", base_ns_)
      .key("traceEvents")
      .begin_array();
  const std::vector<std::string> none;
  const EventFormat format(none, span_prefix_, context_.pid(), base_ns_);
  head += separator(events_++);
  format.process_name(head, context_.rank());
  file_.append(head);
  Update empty;
  empty.region_names = &none;
  empty.now_ns = start_pair_.monotonic_ns;
  file_.commit(tail(empty, format));
}

bool FlightRecorder::commit(const Update& update) {
  if (given_up_) return false;
  const EventFormat format(*update.region_names, span_prefix_, context_.pid(), base_ns_);
  for (const Thread& t : update.threads) {
    if (!thread(t, update, format)) {
      given_up_ = true;
      return false;
    }
  }
  steps(update.new_steps, format);
  file_.commit(tail(update, format));
  return true;
}

bool FlightRecorder::thread(const Thread& t, const Update& update, const EventFormat& format) {
  text_.clear();
  if (!t.pieces.empty() && named_threads_.insert(t.os_tid).second) {
    text_ += separator(events_++);
    format.thread_name(text_, t.os_tid, t.name);
  }
  // Newest first, as at close: a span's enclosing spans come before it,
  // across the pieces of this flush too.
  SpanPaths paths;
  for (const OpenSpan& o : t.open) paths.enter(o.depth, o.begin_ns, INT64_MAX, o.region);
  std::vector<unsigned char> buffer;
  std::vector<std::size_t> offsets;
  for (auto piece = t.pieces.rbegin(); piece != t.pieces.rend(); ++piece) {
    if (update.give_up && update.give_up()) return false;
    const unsigned char* data = piece->memory.data();
    if (piece->memory.empty()) {
      update.read(*piece, buffer);
      data = buffer.data();
    }
    offsets.clear();
    for (std::size_t at = 0; at < piece->bytes; at += record_size(data + at)) {
      offsets.push_back(at);
    }
    for (auto at = offsets.rbegin(); at != offsets.rend(); ++at) {
      const unsigned char* p = data + *at;
      text_ += separator(events_++);
      if (is_mark(p)) {
        format.mark(text_, t.os_tid, p);
        continue;
      }
      RegionRecord r;
      std::memcpy(&r, p, sizeof(r));
      paths.enter(r.depth, r.begin_ns, r.end_ns, r.id);
      format.region(text_, t.os_tid, r.id, r.depth, r.begin_ns, r.end_ns, r.step,
                    paths.path(format, r.depth, r.begin_ns, r.end_ns, r.id), r.unwinding != 0,
                    false);
    }
    // Compressed piece by piece: memory follows a chunk, not the flush.
    file_.append(text_);
    text_.clear();
  }
  file_.append(text_);
  return true;
}

void FlightRecorder::steps(const std::vector<StepMark>& steps, const EventFormat& format) {
  // A step ends where the next begins: the one still running goes in the
  // tail until the next step comes.
  text_.clear();
  for (const StepMark& s : steps) {
    if (have_step_) {
      if (named_threads_.insert(current_step_.os_tid + kStepTrackOffset).second) {
        text_ += separator(events_++);
        format.thread_name(text_, current_step_.os_tid + kStepTrackOffset, "steps");
      }
      text_ += separator(events_++);
      format.step(text_, current_step_.os_tid, current_step_.step, current_step_.time_ns,
                  s.time_ns - 1);
    }
    current_step_ = s;
    have_step_ = true;
  }
  file_.append(text_);
}

std::string FlightRecorder::tail(const Update& update, const EventFormat& format) {
  std::string out;
  std::uint64_t events = events_;
  SpanPaths paths;
  for (const Thread& t : update.threads) {
    paths.clear();
    for (const OpenSpan& o : t.open) {
      paths.enter(o.depth, o.begin_ns, update.now_ns, o.region);
      out += separator(events++);
      format.region(out, t.os_tid, o.region, o.depth, o.begin_ns, update.now_ns, o.step,
                    paths.path(format, o.depth, o.begin_ns, update.now_ns, o.region), false, true);
    }
  }
  if (have_step_) {
    if (named_threads_.count(current_step_.os_tid + kStepTrackOffset) == 0) {
      out += separator(events++);
      format.thread_name(out, current_step_.os_tid + kStepTrackOffset, "steps");
    }
    out += separator(events++);
    format.step(out, current_step_.os_tid, current_step_.step, current_step_.time_ns,
                update.now_ns);
  }
  // The document's top-level object goes on after the events (the writer
  // starts at depth 0, so the separators between members are written here).
  out += "\n],";
  json::Writer w(out);
  w.key("regiontrace").begin_object();
  sdk::clock_sync::Pair until = start_pair_;
  until.monotonic_ns = update.now_ns;
  until.realtime_ns = start_pair_.realtime_ns + (update.now_ns - start_pair_.monotonic_ns);
  sdk::clock_sync::write_trace_members(w, context_, "timeline", start_pair_, until);
  w.field("incomplete", true).field("written_until_ns", update.now_ns);
  w.end_object();
  if (!update.statistics.empty()) {
    out += ',';
    w.key("timeline").raw_value(update.statistics);
  }
  out += "}\n";
  return out;
}

}  // namespace regiontrace::timeline
