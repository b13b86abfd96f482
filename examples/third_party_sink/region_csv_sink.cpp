// region_csv: a complete third-party sink, and the template to copy for your
// own. It writes one CSV row per region instance (who, where, when, how long),
// which any spreadsheet, pandas or DuckDB reads:
//
//   rank,pid,thread,step,depth,path,region,start_ns,duration_ns,unwinding
//   0,4242,1,3,1,profiler_region_inference_denoising/blocks.2,blocks.2,...
//
// Use it (after building this folder, see CMakeLists.txt):
//
//   REGIONTRACE_PLUGIN_PATH=/path/to/build/plugins REGIONTRACE_SINKS=region_csv video_pipeline
//
// or in a profile:
//
//   sinks:
//     region_csv:
//       regions: [inference_denoising, "blocks.*"]   # common keys work here too
//       separator: ";"
//
// What a sink has to know, in the order this file shows it:
//   1. schema(): the keys it accepts, with types, defaults and descriptions.
//      The host validates profiles and REGIONTRACE_REGION_CSV_<KEY> variables
//      against it, and `regiontrace check` lists it. enabled, regions, steps,
//      ranks and output_dir are added by the host for every sink: selection is
//      done before any callback, so this sink sees only what it asked for.
//   2. The constructor reads the validated settings from the SinkContext.
//      Throwing here is a start-up error that names the sink.
//   3. Callbacks run on the application's threads, several at once: be
//      thread-safe and cheap (keep rows in memory, write later).
//   4. flush() and close() make the output durable; close() is the last call,
//      at shutdown, at normal exit and on SIGINT/SIGTERM.
//   5. REGIONTRACE_SINK_PLUGIN exports the class under its sink name.
//
// Only <regiontrace/plugin.hpp> is included: a sink never links against
// libregiontrace, and it must be built with the same compiler ABI as the host.
#include <cstdint>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "regiontrace/plugin.hpp"

namespace {

using regiontrace::KeySpec;

// One finished region instance.
struct Row {
  std::uint64_t thread_id;
  std::int64_t step;
  int depth;
  std::string path;
  std::string name;
  std::int64_t start_ns;
  std::int64_t duration_ns;
  bool unwinding;
};

class RegionCsvSink : public regiontrace::Sink {
 public:
  // 1. The keys. Defaults are written as they would be in YAML.
  static regiontrace::SinkSchema schema() {
    return {
        KeySpec::path("file", "",
                      "the CSV file (default: region_timings_rank<r>_pid<p>.csv in the output "
                      "folder)"),
        KeySpec::string("separator", ",", "field separator, one character"),
        KeySpec::integer("max_rows", 1000000,
                         "rows kept in memory between two writes; more are counted and reported")
            .range(1, 1e9),
    };
  }

  // 2. Settings arrive validated; only our own mistakes (a key missing from
  // schema()) would throw here.
  explicit RegionCsvSink(const regiontrace::SinkContext& ctx)
      : ctx_(ctx),
        path_(ctx.get_string("file").empty() ? ctx.output_path("region_timings", "csv")
                                             : ctx.get_string("file")),
        max_rows_(static_cast<std::size_t>(ctx.get_int("max_rows"))) {
    const std::string& sep = ctx.get_string("separator");
    if (sep.size() != 1) {
      throw std::invalid_argument("separator must be one character, got `" + sep + "`");
    }
    separator_ = sep[0];
    // Open now: an unwritable file is a start-up error, not a surprise at exit.
    out_.open(path_, std::ios::trunc);
    if (!out_) throw std::runtime_error("cannot write " + path_);
    out_ << join({"rank", "pid", "thread", "step", "depth", "path", "region", "start_ns",
                  "duration_ns", "unwinding"})
         << '\n';
    ctx.info("writing region timings to " + path_);
  }

  // Which event families we want. The default (regions, marks, steps,
  // snapshots, timestamps) is more than we need; asking for less costs the
  // host less. Timestamps must be asked for: without them time_ns is 0.
  std::uint32_t interests() const override {
    return regiontrace::kInterestRegions | regiontrace::kInterestSteps |
           regiontrace::kInterestTimestamps;
  }

  // 3. The callbacks. Every string_view in an event dies with the callback:
  // copy what you keep.
  void on_region_begin(const regiontrace::RegionEvent& e) override {
    std::lock_guard<std::mutex> lock(mutex_);
    open_[e.thread_id].push_back(e.time_ns);
  }

  // Comes on the thread that got the matching begin, innermost region first.
  void on_region_end(const regiontrace::RegionEvent& e) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::int64_t>& starts = open_[e.thread_id];
    if (starts.empty()) return;  // began before this sink started
    const std::int64_t start = starts.back();
    starts.pop_back();
    if (rows_.size() >= max_rows_) {
      ++dropped_;  // bounded memory: count what we cannot keep, never lose it silently
      return;
    }
    rows_.push_back(Row{e.thread_id, e.step, e.depth, std::string(e.path), std::string(e.name),
                        start, e.time_ns - start, e.unwinding});
  }

  // A step boundary is a good moment to write: one buffered write per step
  // costs little next to a step. A sink that sees far more events than this
  // one would hand its rows to a writer thread of its own instead.
  void on_step(const regiontrace::StepEvent&) override { flush(); }

  // 4. Durability.
  void flush() override {
    std::vector<Row> rows;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      rows.swap(rows_);  // format and write outside the lock
    }
    std::lock_guard<std::mutex> lock(file_mutex_);
    if (!out_.is_open()) return;
    for (const Row& r : rows) {
      out_ << join({std::to_string(ctx_.rank()), std::to_string(ctx_.pid()),
                    std::to_string(r.thread_id),
                    r.step == regiontrace::kNoStep ? std::string() : std::to_string(r.step),
                    std::to_string(r.depth), r.path, r.name, std::to_string(r.start_ns),
                    std::to_string(r.duration_ns), r.unwinding ? "true" : "false"})
           << '\n';
    }
    out_.flush();
    // Throwing switches this sink off (logged once by the host); the
    // application and the other sinks go on.
    if (!out_) throw std::runtime_error("writing " + path_ + " failed (disk full?)");
  }

  // Idempotent: the host may call it at shutdown and again at exit.
  void close() override {
    flush();
    std::lock_guard<std::mutex> lock(file_mutex_);
    if (!out_.is_open()) return;
    out_.close();
    std::lock_guard<std::mutex> rows_lock(mutex_);
    if (dropped_ > 0) {
      ctx_.warn(std::to_string(dropped_) + " region rows did not fit in max_rows=" +
                std::to_string(max_rows_) + " and are missing from " + path_);
    }
  }

 private:
  // RFC 4180: quote a field that holds the separator, a quote or a newline.
  std::string field(const std::string& s) const {
    if (s.find_first_of(std::string{separator_, '"', '\n', '\r'}) == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  std::string join(const std::vector<std::string>& fields) const {
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line += separator_;
      line += field(fields[i]);
    }
    return line;
  }

  const regiontrace::SinkContext ctx_;  // a copy: the host's may not outlive the constructor
  const std::string path_;
  const std::size_t max_rows_;
  char separator_ = ',';

  std::mutex mutex_;  // guards open_, rows_ and dropped_
  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> open_;  // start times per thread
  std::vector<Row> rows_;
  std::uint64_t dropped_ = 0;

  std::mutex file_mutex_;  // guards out_
  std::ofstream out_;
};

}  // namespace

// 5. Export: the loader finds the sink by this name ("region_csv") and checks
// the ABI version before it touches anything else.
REGIONTRACE_SINK_PLUGIN(RegionCsvSink, "region_csv")
