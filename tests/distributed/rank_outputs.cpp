#include "rank_outputs.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {

namespace fs = std::filesystem;

RunOutputs collect_outputs(const std::string& dir) {
  RunOutputs out;
  static const std::regex kNamed("_rank([0-9]+)_pid([0-9]+)[._]");
  for (const std::string& path : files_under(dir, [](const std::string&) { return true; })) {
    const std::string name = fs::path(path).filename().string();
    std::smatch m;
    if (!std::regex_search(name, m, kNamed)) {
      out.unnamed.push_back(path);
      continue;
    }
    const int rank = std::stoi(m[1]);
    const long pid = std::stol(m[2]);
    std::vector<RankFiles>& sets = out.by_rank[rank];
    auto it =
        std::find_if(sets.begin(), sets.end(), [&](const RankFiles& f) { return f.pid == pid; });
    if (it == sets.end()) {
      sets.push_back(RankFiles{pid, {}});
      it = sets.end() - 1;
    }
    it->files.push_back(path);
  }
  return out;
}

namespace {

void check_config(const std::string& path, int rank, long pid, const Expectation& e,
                  std::vector<std::string>* problems) {
  const nlohmann::json j = read_json(path);
  auto wrong = [&](const std::string& what) { problems->push_back(path + ": " + what); };
  if (j.value("rank", -1) != rank) wrong("rank " + j["rank"].dump());
  if (j.value("pid", -1L) != pid) wrong("pid " + j["pid"].dump());
  if (j.value("world_size", -1) != e.world_size) wrong("world_size " + j["world_size"].dump());
  if (e.local_rank_is_rank && j.value("local_rank", -1) != rank) {
    wrong("local_rank " + j["local_rank"].dump());
  }
  if (!j.contains("clockSync")) {
    wrong("no clockSync");
    return;
  }
  const nlohmann::json& c = j["clockSync"];
  if (!c["start"].is_object() || !c["end"].is_object()) {
    wrong("clockSync without start and end pairs: " + c.dump());
    return;
  }
  // Both clocks move forward between start and shutdown.
  if (c["end"]["monotonic_ns"].get<long long>() < c["start"]["monotonic_ns"].get<long long>() ||
      c["end"]["realtime_ns"].get<long long>() < c["start"]["realtime_ns"].get<long long>()) {
    wrong("clockSync end before start: " + c.dump());
  }
}

// torch_profiler traces: the process is named after its rank and pid, and
// the rank's region spans are all there.
int check_trace(const std::string& path, int rank, long pid, std::vector<std::string>* problems) {
  const nlohmann::json trace = read_json_maybe_gz(path);
  const std::string want = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
  bool named = false;
  int steps = 0;
  for (const nlohmann::json& ev : trace["traceEvents"]) {
    const std::string name = ev.value("name", "");
    if (ev.value("ph", "") == "M" && name == "process_name") {
      const std::string got = ev["args"].value("name", "");
      if (got == want) {
        named = true;
      } else {
        problems->push_back(path + ": process named `" + got + "`, expected `" + want + "`");
      }
    }
    if (ev.value("ph", "") == "X" && ends_with(name, "region::step")) ++steps;
  }
  if (!named) problems->push_back(path + ": no process_name `" + want + "`");
  return steps;
}

}  // namespace

std::vector<std::string> problems_with(const RunOutputs& outputs, const Expectation& e) {
  std::vector<std::string> problems;
  for (const std::string& f : outputs.unnamed) {
    problems.push_back(f + ": no `_rank<r>_pid<p>` in the name");
  }
  std::set<int> got;
  std::set<long> pids;
  for (const auto& [rank, sets] : outputs.by_rank) {
    got.insert(rank);
    if (sets.size() != 1) {
      problems.push_back("rank " + std::to_string(rank) + " wrote from " +
                         std::to_string(sets.size()) + " processes");
    }
    for (const RankFiles& set : sets) {
      if (!pids.insert(set.pid).second) {
        problems.push_back("pid " + std::to_string(set.pid) + " appears under two ranks");
      }
      int configs = 0;
      int traces = 0;
      int steps = 0;
      for (const std::string& f : set.files) {
        const std::string name = fs::path(f).filename().string();
        if (name.rfind("regiontrace_config_rank", 0) == 0) {
          ++configs;
          check_config(f, rank, set.pid, e, &problems);
        } else if (name.rfind("torch_trace", 0) == 0 && !ends_with(name, ".summary.json") &&
                   !ends_with(name, ".summary.txt")) {
          ++traces;
          steps += check_trace(f, rank, set.pid, &problems);
        }
      }
      const std::string who = "rank " + std::to_string(rank) + " pid " + std::to_string(set.pid);
      if (configs != 1) problems.push_back(who + ": " + std::to_string(configs) + " config files");
      if (e.steps > 0 && traces == 0) problems.push_back(who + ": no torch_trace file");
      if (e.steps > 0 && steps != e.steps) {
        problems.push_back(who + ": " + std::to_string(steps) + " `step` spans, expected " +
                           std::to_string(e.steps));
      }
    }
  }
  const std::set<int> want(e.ranks.begin(), e.ranks.end());
  if (got != want) {
    std::string g;
    for (int r : got) g += " " + std::to_string(r);
    std::string w;
    for (int r : want) w += " " + std::to_string(r);
    problems.push_back("ranks that wrote:" + g + "; expected:" + w);
  }
  return problems;
}

std::set<std::string> job_ids(const RunOutputs& outputs) {
  std::set<std::string> ids;
  for (const auto& [rank, sets] : outputs.by_rank) {
    for (const RankFiles& set : sets) {
      for (const std::string& f : set.files) {
        if (fs::path(f).filename().string().rfind("regiontrace_config_rank", 0) == 0) {
          ids.insert(read_json(f).value("job_id", ""));
        }
      }
    }
  }
  return ids;
}

std::string rank_steps_program() {
  return REGIONTRACE_RANK_STEPS;
}

std::string missing_builtin_sink(const std::string& sink) {
  const std::string file = builtin_plugin_dir() + "/regiontrace_sink_" + sink + ".so";
  std::error_code ec;
  if (fs::exists(file, ec)) return {};
  return "the " + sink + " sink is not built (" + file + " is missing; it needs libtorch)";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += "  " + i + "\n";
  return out;
}

}  // namespace regiontrace::test
