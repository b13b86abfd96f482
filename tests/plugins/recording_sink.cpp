// A sink for tests: records every event it gets as one JSON line, in order,
// and writes them to `file` when flushed. Keys let a test make it throw.
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace {

using regiontrace::KeySpec;
namespace json = regiontrace::json;

class RecordingSink : public regiontrace::Sink {
 public:
  static regiontrace::SinkSchema schema() {
    return {
        KeySpec::path("file", "", "where the recorded events go (default: output_path)"),
        KeySpec::string("throw_in", "", "callback that throws (on_region_begin, ...)"),
        KeySpec::string("throw_region", "", "throw only for this region name (empty: any)"),
        KeySpec::boolean("tensors", false, "ask for tensors"),
        KeySpec::boolean("spans", false, "ask for regions as spans (kInterestSpans)"),
        KeySpec::boolean("fail_construction", false, "throw from the constructor"),
    };
  }

  explicit RecordingSink(const regiontrace::SinkContext& ctx)
      : file_(ctx.get_string("file").empty() ? ctx.output_path("recorder", "jsonl")
                                             : ctx.get_string("file")),
        throw_in_(ctx.get_string("throw_in")),
        throw_region_(ctx.get_string("throw_region")),
        tensors_(ctx.get_bool("tensors")),
        spans_(ctx.get_bool("spans")) {
    if (ctx.get_bool("fail_construction")) throw std::runtime_error("asked to fail");
    std::string line = "{\"event\":\"start\",\"rank\":";
    json::append_int(line, ctx.rank());
    line += ",\"output_dir\":";
    json::append_escaped(line, ctx.output_dir());
    line += '}';
    lines_.push_back(line);
  }

  std::uint32_t interests() const override {
    return regiontrace::kInterestDefault | (tensors_ ? regiontrace::kInterestTensors : 0u) |
           (spans_ ? regiontrace::kInterestSpans : 0u);
  }

  void on_region_routed(const regiontrace::RegionInfo& info) override {
    maybe_throw("on_region_routed", info.name);
    std::string l = "{\"event\":\"routed\",\"name\":";
    json::append_escaped(l, info.name);
    l += ",\"id\":";
    json::append_uint(l, info.id);
    l += '}';
    add(std::move(l));
  }
  // One line per batch, with its spans: the test sees how they were batched.
  void on_spans(const regiontrace::SpanBatch& b) override {
    maybe_throw("on_spans", {});
    std::string l = "{\"event\":\"spans\",\"thread\":";
    json::append_uint(l, b.thread_id);
    l += ",\"os_tid\":";
    json::append_int(l, b.os_tid);
    l += ",\"on_os_tid\":";
    json::append_int(l, static_cast<long>(::syscall(SYS_gettid)));
    l += ",\"last\":";
    l += b.last != 0 ? "true" : "false";
    l += ",\"spans\":[";
    for (std::size_t i = 0; i < b.count; ++i) {
      const regiontrace::Span& s = b.spans[i];
      if (i != 0) l += ',';
      l += "{\"id\":";
      json::append_uint(l, s.id);
      l += ",\"depth\":";
      json::append_int(l, s.depth);
      l += ",\"unwinding\":";
      l += s.unwinding != 0 ? "true" : "false";
      l += ",\"open\":";
      l += s.open != 0 ? "true" : "false";
      l += ",\"step\":";
      append_step(l, s.step);
      l += ",\"begin_ns\":";
      json::append_int(l, s.begin_ns);
      l += ",\"end_ns\":";
      json::append_int(l, s.end_ns);
      l += '}';
    }
    l += "]}";
    add(std::move(l));
  }
  void on_region_begin(const regiontrace::RegionEvent& e) override {
    maybe_throw("on_region_begin", e.name);
    add(region_line("begin", e));
  }
  void on_region_end(const regiontrace::RegionEvent& e) override {
    maybe_throw("on_region_end", e.name);
    add(region_line("end", e));
  }
  void on_step(const regiontrace::StepEvent& e) override {
    maybe_throw("on_step", {});
    std::string l = "{\"event\":\"step\",\"step\":";
    json::append_int(l, e.step);
    l += ",\"thread\":";
    json::append_uint(l, e.thread_id);
    l += '}';
    add(std::move(l));
  }
  void on_mark(const regiontrace::MarkEvent& e) override {
    maybe_throw("on_mark", e.name);
    std::string l = "{\"event\":\"mark\",\"name\":";
    json::append_escaped(l, e.name);
    l += ",\"path\":";
    json::append_escaped(l, e.path);
    l += ",\"step\":";
    append_step(l, e.step);
    l += '}';
    add(std::move(l));
  }
  void on_tensor(const regiontrace::TensorEvent& e) override {
    std::string l = "{\"event\":\"tensor\",\"label\":";
    json::append_escaped(l, e.label);
    l += ",\"module\":";
    json::append_escaped(l, e.module);
    l += ",\"path\":";
    json::append_escaped(l, e.path);
    l += '}';
    add(std::move(l));
  }
  void on_snapshot_request(const regiontrace::SnapshotRequest& e) override {
    std::string l = "{\"event\":\"snapshot\",\"reason\":";
    json::append_escaped(l, e.reason);
    l += ",\"path\":";
    json::append_escaped(l, e.path);
    l += '}';
    add(std::move(l));
  }
  void flush() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::ofstream out(file_, std::ios::trunc);
    for (const std::string& l : lines_) out << l << '\n';
  }
  void close() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return;
      closed_ = true;
      lines_.push_back("{\"event\":\"close\"}");
    }
    flush();
  }

 private:
  static void append_step(std::string& l, std::int64_t step) {
    if (step == regiontrace::kNoStep) {
      l += "null";
    } else {
      json::append_int(l, step);
    }
  }
  std::string region_line(const char* kind, const regiontrace::RegionEvent& e) {
    std::string l = "{\"event\":\"";
    l += kind;
    l += "\",\"name\":";
    json::append_escaped(l, e.name);
    l += ",\"path\":";
    json::append_escaped(l, e.path);
    l += ",\"depth\":";
    json::append_int(l, e.depth);
    l += ",\"step\":";
    append_step(l, e.step);
    l += ",\"thread\":";
    json::append_uint(l, e.thread_id);
    l += ",\"unwinding\":";
    l += e.unwinding ? "true" : "false";
    l += ",\"time_ns\":";
    json::append_int(l, e.time_ns);
    l += ",\"begin_time_ns\":";
    json::append_int(l, e.begin_time_ns);
    l += '}';
    return l;
  }
  void maybe_throw(const char* callback, std::string_view region) {
    if (throw_in_ == callback && (throw_region_.empty() || throw_region_ == region)) {
      throw std::runtime_error(std::string("recorder asked to throw in ") + callback);
    }
  }
  void add(std::string line) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!closed_) lines_.push_back(std::move(line));
  }

  std::string file_;
  std::string throw_in_;
  std::string throw_region_;
  bool tensors_;
  bool spans_;
  std::mutex mutex_;
  std::vector<std::string> lines_;
  bool closed_ = false;
};

}  // namespace

// Built twice (recorder, recorder2) so a test can run two sinks with
// different selections side by side.
#ifndef RECORDER_NAME
#define RECORDER_NAME "recorder"
#endif
REGIONTRACE_SINK_PLUGIN(RecordingSink, RECORDER_NAME)
