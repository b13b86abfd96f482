#include "unfinished_runs.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>

#include <yaml-cpp/yaml.h>

#include "config/effective_config.hpp"
#include "logger.hpp"

namespace regiontrace::detail {
namespace {

// A zombie has ended: what it did not write is lost already.
bool still_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (stat) {
    std::string line;
    std::getline(stat, line);
    const std::size_t close = line.rfind(')');  // the name may hold spaces and parentheses
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
  }
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

// JSON is YAML: the file this library wrote, read with the parser it has.
// A run on another host (a folder shared over the network) is not judged:
// its pid means nothing here.
bool stopped(const std::string& path, const std::string& host, long long& rank) {
  try {
    const YAML::Node config = YAML::LoadFile(path);
    if (!config["host"] || config["host"].as<std::string>() != host) return true;
    if (config["rank"]) rank = config["rank"].as<long long>();
    const YAML::Node clock = config["clockSync"];
    return !clock || !clock["end"] || !clock["end"].IsNull();
  } catch (const std::exception&) {
    return true;  // not ours to judge
  }
}

}  // namespace

std::vector<UnfinishedRun> find_unfinished_runs(const std::set<std::string>& dirs, pid_t self,
                                                const std::string& host, std::time_t since) {
  static const std::regex kName(R"(regiontrace_config(?:_\d+)?_rank-?\d+_pid(\d+)\.json)");
  std::vector<UnfinishedRun> runs;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    const std::filesystem::path configs = std::filesystem::path(dir) / kConfigSnapshotFolder;
    for (const auto& entry : std::filesystem::directory_iterator(configs, ec)) {
      const std::string name = entry.path().filename().string();
      std::smatch m;
      if (!std::regex_match(name, m, kName)) continue;
      const pid_t pid = static_cast<pid_t>(std::stoll(m[1].str()));
      struct stat st {};
      const std::string path = entry.path().string();
      if (pid == self || ::stat(path.c_str(), &st) != 0 || st.st_mtime < since) continue;
      if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20) || still_running(pid)) continue;
      UnfinishedRun run{dir, path, pid, 0};
      if (!stopped(path, host, run.rank)) runs.push_back(run);
    }
  }
  return runs;
}

void warn_of_unfinished_runs(const std::set<std::string>& dirs, pid_t self, const std::string& host,
                             std::time_t since) {
  static std::mutex mutex;
  static auto* reported = new std::set<std::string>();
  const std::vector<UnfinishedRun> runs = find_unfinished_runs(dirs, self, host, since);
  std::lock_guard<std::mutex> lock(mutex);
  for (const UnfinishedRun& run : runs) {
    if (!reported->insert(run.config_path).second) continue;
    log(LogLevel::kWarn,
        "process " + std::to_string(run.pid) + " (rank " + std::to_string(run.rank) +
            ") recorded into " + run.output_dir +
            " and ended without closing regiontrace (killed, e.g. by SIGKILL or the OOM "
            "killer, or ended by os._exit()/_exit()): its timeline and region statistics there "
            "(_pid" +
            std::to_string(run.pid) +
            ") hold what their last flush wrote, marked incomplete; other files may be cut "
            "short. (A worker of yours that ends with os._exit() keeps everything if it calls "
            "regiontrace.shutdown() first.) See " +
            run.config_path);
  }
}

}  // namespace regiontrace::detail
