// Processes that started regiontrace in an output folder and never stopped
// it: a forked worker ended by os._exit/_exit, a process killed. Nothing
// runs in such a process at its end, so what its sinks still buffered is
// lost and its files may be cut short; the only place left to say so is
// another process writing into the same folder. Its effective configuration
// file (<folder>/regiontrace_config/regiontrace_config_rank<r>_pid<p>.json) tells:
// written at start with `"clockSync": {"end": null}`, written again at
// shutdown with the end.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <set>
#include <string>
#include <vector>

namespace regiontrace::detail {

struct UnfinishedRun {
  std::string output_dir;   // the folder it recorded into
  std::string config_path;  // the regiontrace_config/regiontrace_config_rank*_pid*.json it left
  pid_t pid = 0;
  long long rank = 0;
};

// Runs in `dirs` on `host`, other than `self`, that started at `since` or
// later, have ended (no such process, or a zombie) and never stopped
// regiontrace.
std::vector<UnfinishedRun> find_unfinished_runs(const std::set<std::string>& dirs, pid_t self,
                                                const std::string& host, std::time_t since);

// One warning per run not reported before by this process.
void warn_of_unfinished_runs(const std::set<std::string>& dirs, pid_t self, const std::string& host,
                             std::time_t since);

}  // namespace regiontrace::detail
