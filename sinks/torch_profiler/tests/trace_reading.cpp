#include "trace_reading.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "trace_file.hpp"

namespace regiontrace::torch_profiler::test {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<std::string> trace_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    // regiontrace's names, and FastVideo's "<host>_<pid>.<ns>.pt.trace.json.gz".
    const bool trace = ends_with(name, ".json") || ends_with(name, ".json.gz");
    const bool ours =
        name.rfind("torch_trace", 0) == 0 && name.find(".summary.") == std::string::npos;
    if (trace && (ours || name.find(".pt.trace.json") != std::string::npos)) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

json load_trace(const std::string& path) {
  return json::parse(read_maybe_gzip(path));
}

namespace {
template <typename Pred>
std::vector<json> select(const json& trace, Pred pred) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (pred(e)) out.push_back(e);
  }
  return out;
}
}  // namespace

std::vector<json> cpu_ops(const json& trace, const std::string& name) {
  return select(trace, [&](const json& e) {
    return e.value("ph", "") == "X" && e.value("cat", "") == "cpu_op" &&
           (name.empty() || e.value("name", "") == name);
  });
}

std::vector<json> region_spans(const json& trace, const std::string& prefix) {
  const std::string start = prefix + ".region::";
  return select(trace, [&](const json& e) {
    return e.value("ph", "") == "X" && e.value("name", "").rfind(start, 0) == 0;
  });
}

std::vector<json> markers(const json& trace, bool enable, const std::string& prefix) {
  const std::string name =
      prefix + (enable ? ".profiler.enable_collection" : ".profiler.disable_collection");
  return select(trace, [&](const json& e) {
    return e.value("ph", "") == "i" && e.value("name", "") == name;
  });
}

std::vector<json> memory_events(const json& trace) {
  return select(trace, [](const json& e) { return e.value("name", "") == "[memory]"; });
}

std::size_t event_count(const json& trace) {
  return select(trace, [](const json& e) { return e.value("ph", "") != "M"; }).size();
}

double ts(const json& event) {
  return event.at("ts").get<double>();
}
double end(const json& event) {
  return ts(event) + event.value("dur", 0.0);
}

bool within(const json& event, const json& span, double slack_us) {
  return event.at("tid") == span.at("tid") && ts(event) >= ts(span) - slack_us &&
         end(event) <= end(span) + slack_us;
}

StderrCapture::StderrCapture() {
  char tmpl[] = "/tmp/regiontrace_stderr_XXXXXX";
  const int fd = mkstemp(tmpl);
  path_ = tmpl;
  std::fflush(stderr);
  saved_ = dup(2);
  dup2(fd, 2);
  close(fd);
}

StderrCapture::~StderrCapture() {
  text();
}

std::string StderrCapture::text() {
  if (!done_) {
    done_ = true;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    text_ = read_maybe_gzip(path_);
    std::remove(path_.c_str());
  }
  return text_;
}

std::string workload_program() {
  return REGIONTRACE_TP_WORKLOAD;
}

}  // namespace regiontrace::torch_profiler::test
