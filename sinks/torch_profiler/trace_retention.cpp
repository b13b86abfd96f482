#include "trace_retention.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace regiontrace::torch_profiler {
namespace {

namespace fs = std::filesystem;

// Never destroyed: traces are written (and old ones removed) from the host's
// exit handler, which may run after later-constructed statics are gone.
const std::regex& trace_pattern() {
  // ".pt.trace" is what TensorBoard's plugin and HTA look for; traces of
  // earlier versions, without it, still count for keep_last.
  static const std::regex* re = new std::regex(
      R"(^(torch_trace(_step-?[0-9]+)?(_[0-9]+)?_rank([0-9]+)_pid[0-9]+(\.[0-9]+)?)(\.pt\.trace)?\.json(\.gz)?$)");
  return *re;
}

}  // namespace

bool is_trace_file(const std::string& file_name, int rank) {
  std::smatch m;
  return std::regex_match(file_name, m, trace_pattern()) && m[4].str() == std::to_string(rank);
}

std::vector<std::string> remove_old_traces(const std::string& dir, int rank, long long keep) {
  std::vector<std::string> removed;
  if (keep <= 0) return removed;
  struct Trace {
    fs::file_time_type time;
    std::string name;
    std::string stem;
  };
  std::vector<Trace> traces;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, trace_pattern()) || m[4].str() != std::to_string(rank)) continue;
    std::error_code tec;
    const fs::file_time_type t = fs::last_write_time(entry.path(), tec);
    if (!tec) traces.push_back({t, name, m[1].str()});
  }
  std::sort(traces.begin(), traces.end(), [](const Trace& a, const Trace& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.name > b.name;
  });
  for (std::size_t i = static_cast<std::size_t>(keep); i < traces.size(); ++i) {
    for (const std::string& file :
         {traces[i].name, traces[i].stem + ".summary.txt", traces[i].stem + ".summary.json"}) {
      const fs::path p = fs::path(dir) / file;
      std::error_code rec;
      if (fs::remove(p, rec)) removed.push_back(p.string());
    }
  }
  return removed;
}

}  // namespace regiontrace::torch_profiler
