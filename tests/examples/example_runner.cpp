#include "example_runner.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

ProgramRun run_program(const std::string& program, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env, const std::string& cwd) {
  const CleanEnv clean;  // the child inherits none of ours
  std::string cmd;
  if (!cwd.empty()) cmd += "cd " + shell_quote(cwd) + " && ";
  cmd += "env";
  if (env.count("REGIONTRACE_LOG_LEVEL") == 0) cmd += " REGIONTRACE_LOG_LEVEL=warn";
  for (const auto& [name, value] : env) cmd += " " + name + "=" + shell_quote(value);
  cmd += " " + shell_quote(program);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  const CommandResult r = run_command(cmd);
  return {r.exit_code, r.output};
}

std::string video_pipeline_program() {
  return REGIONTRACE_VIDEO_PIPELINE;
}
std::string training_loop_program() {
  return REGIONTRACE_TRAINING_LOOP;
}
std::string regiontrace_program() {
  return REGIONTRACE_CLI;
}

std::string profile_path(const std::string& name) {
  return std::string(REGIONTRACE_PROFILES_DIR) + "/" + name + ".yaml";
}

std::vector<std::string> shipped_profiles() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(REGIONTRACE_PROFILES_DIR)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string sink_plugin_file(const std::string& sink) {
  return builtin_plugin_dir() + "/regiontrace_sink_" + sink + ".so";
}

std::vector<std::string> missing_sinks(const std::vector<std::string>& sinks) {
  std::vector<std::string> missing;
  for (const std::string& s : sinks) {
    if (!fs::exists(sink_plugin_file(s))) missing.push_back(s);
  }
  return missing;
}

std::vector<std::string> profile_sinks(const std::string& profile_file) {
  const YAML::Node root = YAML::LoadFile(profile_file);
  std::vector<std::string> sinks;
  if (!root["sinks"]) return sinks;
  for (const auto& kv : root["sinks"]) {
    const YAML::Node settings = kv.second;
    if (settings.IsMap() && settings["enabled"] && !settings["enabled"].as<bool>()) continue;
    sinks.push_back(kv.first.as<std::string>());
  }
  return sinks;
}

std::vector<std::string> small_video_args() {
  return {"--blocks", "4", "--steps", "4", "--frames", "4", "--height", "32", "--width", "32"};
}

std::vector<std::string> small_training_args() {
  return {"--epochs", "2", "--steps-per-epoch", "3", "--batch", "2", "--validation-batches", "1"};
}

std::string join_words(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i > 0 ? sep : "") + words[i];
  return out;
}

}  // namespace regiontrace::test
