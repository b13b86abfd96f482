#include "trace_retention.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "fastvideo_layout.hpp"
#include "regiontrace_layout.hpp"

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

namespace {

struct Trace {
  fs::file_time_type time;
  std::string name;
  std::vector<std::string> with;  // files removed with it (its summaries)
};

// Removes all but the `keep` newest of `traces` (by modification time, then
// name), each with its companions.
std::vector<std::string> remove_all_but_newest(const std::string& dir, std::vector<Trace> traces,
                                               long long keep) {
  std::vector<std::string> removed;
  std::sort(traces.begin(), traces.end(), [](const Trace& a, const Trace& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.name > b.name;
  });
  for (std::size_t i = static_cast<std::size_t>(keep); i < traces.size(); ++i) {
    std::vector<std::string> files = traces[i].with;
    files.insert(files.begin(), traces[i].name);
    for (const std::string& file : files) {
      const fs::path p = fs::path(dir) / file;
      std::error_code rec;
      if (fs::remove(p, rec)) removed.push_back(p.string());
    }
  }
  return removed;
}

// The files of `dir` for which `match` gives companions (nullopt: not one).
template <typename Match>
std::vector<Trace> traces_in(const std::string& dir, const Match& match) {
  std::vector<Trace> traces;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::optional<std::vector<std::string>> with = match(name);
    if (!with) continue;
    std::error_code tec;
    const fs::file_time_type t = fs::last_write_time(entry.path(), tec);
    if (!tec) traces.push_back({t, name, std::move(*with)});
  }
  return traces;
}

}  // namespace

std::vector<std::string> remove_old_traces(const std::string& dir, int rank, long long keep) {
  if (keep <= 0) return {};
  const std::string r = std::to_string(rank);
  return remove_all_but_newest(
      dir,
      traces_in(dir,
                [&](const std::string& name) -> std::optional<std::vector<std::string>> {
                  std::smatch m;
                  if (!std::regex_match(name, m, trace_pattern()) || m[4].str() != r) {
                    return std::nullopt;
                  }
                  // Its summaries in summaries/, or beside it where an
                  // earlier version wrote them.
                  const std::string in_folder = std::string(kSummaryFolder) + "/" + m[1].str();
                  return std::vector<std::string>{
                      in_folder + ".summary.txt", in_folder + ".summary.json",
                      m[1].str() + ".summary.txt", m[1].str() + ".summary.json"};
                }),
      keep);
}

std::vector<std::string> remove_old_fastvideo_traces(const std::string& dir, long pid,
                                                     long long keep) {
  if (keep <= 0) return {};
  return remove_all_but_newest(
      dir,
      traces_in(dir,
                [&](const std::string& name) -> std::optional<std::vector<std::string>> {
                  if (!is_own_fastvideo_trace(name, pid)) return std::nullopt;
                  return std::vector<std::string>{};  // summary_rank<r> belongs to the rank
                }),
      keep);
}

}  // namespace regiontrace::torch_profiler
