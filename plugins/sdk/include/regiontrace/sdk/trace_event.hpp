// One Chrome-trace event, appended to a string as JSON, with its members in
// the order Kineto writes them (ph, cat, name, pid, tid, ts, dur, ..., args)
// and its times as exact microseconds after the trace's base
// (trace_time.hpp). Every event regiontrace writes into a trace is formatted
// here; a third-party sink writing a Chrome trace can use it too, with
// ChromeTraceWriter (chrome_trace_writer.hpp) for the document around it.
//
//   sdk::TraceEvent e(out, base_ns, "X", "user_annotation", name, pid, tid);
//   e.ts(begin_ns).dur(end_ns - begin_ns);
//   e.args().field("step", 3);
//   e.end();
//
// Flows (Kineto's "ac2g" links, or your own): ph "s" and "f" events with the
// same field("id", n); the "f" end adds field("bp", "e").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::sdk {

class TraceEvent {
 public:
  // `cat` empty: no "cat" member (metadata and counters need none).
  TraceEvent(std::string& out, std::int64_t base_ns, std::string_view ph, std::string_view cat,
             std::string_view name, std::int64_t pid, std::uint64_t tid)
      : w_(out), base_ns_(base_ns) {
    w_.begin_object().field("ph", ph);
    if (!cat.empty()) w_.field("cat", cat);
    w_.field("name", name).field("pid", pid).field("tid", tid);
  }
  TraceEvent(const TraceEvent&) = delete;
  TraceEvent& operator=(const TraceEvent&) = delete;

  // "ts": `ns` on the trace's clock, written relative to its base.
  TraceEvent& ts(std::int64_t ns) { return time("ts", ns - base_ns_); }
  // "dur": a length in nanoseconds.
  TraceEvent& dur(std::int64_t ns) { return time("dur", ns); }
  // Any other member before args ("s", "id", "bp", ...).
  template <typename T>
  TraceEvent& field(std::string_view key, T&& value) {
    w_.field(key, std::forward<T>(value));
    return *this;
  }
  // The "args" object, opened on first use; end() closes it.
  json::Writer& args() {
    if (!in_args_) {
      w_.key("args").begin_object();
      in_args_ = true;
    }
    return w_;
  }
  void end() {
    if (in_args_) w_.end_object();
    in_args_ = false;
    w_.end_object();
  }

 private:
  TraceEvent& time(std::string_view key, std::int64_t ns) {
    std::string us;  // times after the base fit its inline buffer: no allocation
    json::append_microseconds(us, ns);
    w_.key(key).raw_value(us);
    return *this;
  }

  json::Writer w_;
  std::int64_t base_ns_;
  bool in_args_ = false;
};

// A metadata event naming a process or a track: `what` is "process_name"
// or "thread_name"; `value` goes in args.name.
inline void append_metadata_event(std::string& out, std::string_view what, std::int64_t pid,
                                  std::uint64_t tid, std::string_view value) {
  TraceEvent e(out, 0, "M", "", what, pid, tid);
  e.args().field("name", value);
  e.end();
}

}  // namespace regiontrace::sdk
