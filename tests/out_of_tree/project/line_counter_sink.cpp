// Counts regions and remembers the deepest path; writes one line at close().
#include <fstream>
#include <mutex>
#include <string>

#include <regiontrace/plugin.hpp>

class LineCounterSink : public regiontrace::Sink {
 public:
  static regiontrace::SinkSchema schema() {
    return {regiontrace::KeySpec::string("label", "regions", "first word of the line")};
  }
  explicit LineCounterSink(const regiontrace::SinkContext& ctx)
      : path_(ctx.output_path("line_counter", "txt")), label_(ctx.get_string("label")) {}
  void on_region_begin(const regiontrace::RegionEvent& e) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
    if (e.depth >= deepest_) {
      deepest_ = e.depth;
      deepest_path_ = std::string(e.path);
    }
  }
  void close() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::ofstream(path_) << label_ << ": " << count_ << " regions, deepest path " << deepest_path_;
  }

 private:
  std::string path_;
  std::string label_;
  std::mutex mutex_;
  int count_ = 0;
  int deepest_ = -1;
  std::string deepest_path_;
};

REGIONTRACE_SINK_PLUGIN(LineCounterSink, "line_counter")
