// Reading what the torch_profiler sink wrote, for the tests: traces
// (gunzipped and parsed with nlohmann::json), their events by kind, and
// stderr captured around a block of code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace regiontrace::torch_profiler::test {

using nlohmann::json;

// Trace files (torch_trace*.json / .json.gz) in `dir`, sorted by name.
std::vector<std::string> trace_files(const std::string& dir);
json load_trace(const std::string& path);

std::vector<json> cpu_ops(const json& trace, const std::string& name = "");
std::vector<json> region_spans(const json& trace, const std::string& prefix = "regiontrace");
std::vector<json> markers(const json& trace, bool enable,
                          const std::string& prefix = "regiontrace");
std::vector<json> memory_events(const json& trace);
// Every event but the ph:M names.
std::size_t event_count(const json& trace);

double ts(const json& event);
double end(const json& event);
// `event` lies within `span` on the same thread, give or take `slack_us`
// (libtorch 1.13 stamps ops in whole microseconds).
bool within(const json& event, const json& span, double slack_us = 1.0);

// Everything written to file descriptor 2 between construction and text().
class StderrCapture {
 public:
  StderrCapture();
  ~StderrCapture();
  std::string text();

 private:
  int saved_ = -1;
  std::string path_;
  bool done_ = false;
  std::string text_;
};

// The workload program the process tests run (tests/workload.cpp).
std::string workload_program();

}  // namespace regiontrace::torch_profiler::test
