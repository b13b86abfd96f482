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
//      thread-safe and cheap. Hand rows to the SDK's writer thread
//      (sdk::BoundedQueueWriter: bounded, what does not fit is counted) and
//      let it format and write them.
//   4. flush() and close() make the output durable; close() is the last call,
//      at shutdown, at normal exit and on SIGINT/SIGTERM.
//   5. REGIONTRACE_SINK_PLUGIN exports the class under its sink name.
//
// Only SDK headers are included: <regiontrace/plugin.hpp> and the helpers
// under regiontrace/sdk/ (writer thread, file writers, JSON, glob), all
// header-only. A sink never links against libregiontrace, and it must be
// built with the same compiler ABI as the host.
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/bounded_queue_writer.hpp"
#include "regiontrace/sdk/line_file_writer.hpp"

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
                         "rows waiting for the writer thread; more are counted and reported")
            .range(1, 1e9),
    };
  }

  // 2. Settings arrive validated; only our own mistakes (a key missing from
  // schema()) would throw here.
  explicit RegionCsvSink(const regiontrace::SinkContext& ctx)
      : ctx_(ctx),
        path_(ctx.get_string("file").empty() ? ctx.output_path("region_timings", "csv")
                                             : ctx.get_string("file")),
        max_rows_(static_cast<std::size_t>(ctx.get_int("max_rows"))),
        separator_(separator(ctx.get_string("separator"))),
        // Open now: an unwritable file is a start-up error, not a surprise at
        // exit. LineFileWriter writes whole lines with write(2) from its own
        // buffer: no torn row on a full disk, nothing written twice by a
        // fork()ed child.
        file_(path_),
        // Rows wait here for the writer thread; a full queue drops (and
        // counts) rather than slowing the application down.
        writer_(
            {max_rows_, regiontrace::sdk::OnFull::kDrop},
            [this](std::vector<Row>& rows) { write_rows(rows); }, [this] { sync_file(); }) {
    file_.append(join({"rank", "pid", "thread", "step", "depth", "path", "region", "start_ns",
                       "duration_ns", "unwinding"}) +
                 '\n');
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
    // Bounded: a row that does not fit is counted (reported at close), never
    // lost silently.
    writer_.push(Row{e.thread_id, e.step, e.depth, std::string(e.path), std::string(e.name), start,
                     e.time_ns - start, e.unwinding});
  }

  // A step boundary is a good moment to have the rows written; this does
  // not wait for the disk.
  void on_step(const regiontrace::StepEvent&) override { writer_.request_flush(); }

  // 4. Durability.
  void flush() override {
    // Waits until every row so far is in the file. Throwing switches this
    // sink off (logged once by the host); the application and the other
    // sinks go on. The writer's first error is kept: later rows are refused.
    if (!writer_.flush()) throw std::runtime_error(writer_.error());
  }

  // Idempotent: the host may call it at shutdown and again at exit.
  void close() override {
    std::lock_guard<std::mutex> lock(close_mutex_);
    if (closed_) return;
    closed_ = true;
    writer_.close();  // writes every queued row, then stops the thread
    file_.close();
    if (writer_.dropped() > 0) {
      ctx_.warn(std::to_string(writer_.dropped()) + " region rows did not fit in max_rows=" +
                std::to_string(max_rows_) + " and are missing from " + path_);
    }
    if (file_.failed()) ctx_.warn(file_.error());
  }

 private:
  static char separator(const std::string& sep) {
    if (sep.size() != 1) {
      throw std::invalid_argument("separator must be one character, got `" + sep + "`");
    }
    return sep[0];
  }

  // On the writer thread: format outside any lock the callbacks take.
  void write_rows(const std::vector<Row>& rows) {
    text_.clear();
    for (const Row& r : rows) {
      text_ += join({std::to_string(ctx_.rank()), std::to_string(ctx_.pid()),
                     std::to_string(r.thread_id),
                     r.step == regiontrace::kNoStep ? std::string() : std::to_string(r.step),
                     std::to_string(r.depth), r.path, r.name, std::to_string(r.start_ns),
                     std::to_string(r.duration_ns), r.unwinding ? "true" : "false"});
      text_ += '\n';
    }
    // A failed write throws: the writer keeps the first error (sticky).
    if (!file_.append(text_)) throw std::runtime_error(file_.error());
  }
  void sync_file() {
    if (!file_.flush()) throw std::runtime_error(file_.error());
  }

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
  const char separator_;

  std::mutex mutex_;                                                   // guards open_
  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> open_;  // start times per thread

  regiontrace::sdk::LineFileWriter file_;  // the writer thread's, and close()'s after it
  std::string text_;                       // the writer thread's formatting buffer
  std::mutex close_mutex_;
  bool closed_ = false;
  // Last member: its thread starts once everything above exists, and stops
  // (destructor) before any of it goes.
  regiontrace::sdk::BoundedQueueWriter<Row> writer_;
};

}  // namespace

// 5. Export: the loader finds the sink by this name ("region_csv") and checks
// the ABI version before it touches anything else.
REGIONTRACE_SINK_PLUGIN(RegionCsvSink, "region_csv")
