// What the ranks of one run wrote into one folder, grouped by the rank and
// pid every file name carries, and the checks every launcher test applies.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace regiontrace::test {

struct RankFiles {
  long pid = 0;
  std::vector<std::string> files;  // full paths, sorted
};

struct RunOutputs {
  std::map<int, std::vector<RankFiles>> by_rank;  // one entry per pid
  std::vector<std::string> unnamed;               // files without `_rank<r>_pid<p>`
};

RunOutputs collect_outputs(const std::string& dir);

struct Expectation {
  std::vector<int> ranks;  // exactly these ranks wrote
  int world_size = 4;
  bool local_rank_is_rank = true;  // one node: LOCAL_RANK == RANK
  int steps = 0;                   // torch_profiler traces: spans of region "step" per rank
};

// Every problem found, one line each (empty: all good), so one failure
// shows everything that is wrong with a run.
std::vector<std::string> problems_with(const RunOutputs& outputs, const Expectation& expected);

// The `job_id` of every configuration file.
std::set<std::string> job_ids(const RunOutputs& outputs);

std::string rank_steps_program();
// Why a test cannot run here ("" when it can): a built-in sink not built.
std::string missing_builtin_sink(const std::string& sink);
std::string shell_quote(const std::string& s);
std::string lines(const std::vector<std::string>& items);

}  // namespace regiontrace::test
