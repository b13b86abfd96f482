// Runs the example programs and the regiontrace CLI the way a user does (a
// child process with its own environment) and finds what they need.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace regiontrace::test {

struct ProgramRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `program args...` in `cwd` (when given). The child sees none of this
// process's REGIONTRACE_* / FASTVIDEO_* variables, only `env` (plus
// REGIONTRACE_LOG_LEVEL=warn unless `env` sets it).
ProgramRun run_program(const std::string& program, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env = {},
                       const std::string& cwd = "");

std::string video_pipeline_program();
std::string training_loop_program();
std::string regiontrace_program();                  // empty when the CLI is not built
std::string profile_path(const std::string& name);  // config/profiles/<name>.yaml
std::vector<std::string> shipped_profiles();        // names, sorted

// A built-in sink's plugin file, and which of `sinks` are not built.
std::string sink_plugin_file(const std::string& sink);
std::vector<std::string> missing_sinks(const std::vector<std::string>& sinks);
// The sinks a profile enables (keys under `sinks:` not set `enabled: false`).
std::vector<std::string> profile_sinks(const std::string& profile_file);

// Arguments that make each example finish in about a second.
std::vector<std::string> small_video_args();
std::vector<std::string> small_training_args();

std::string join_words(const std::vector<std::string>& words, const std::string& sep = ", ");

}  // namespace regiontrace::test
