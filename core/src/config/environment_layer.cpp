#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "../logger.hpp"
#include "../suggest.hpp"
#include "config_sources.hpp"

namespace regiontrace::detail {
namespace {

std::string env_source(const std::string& name) {
  return "env " + name;
}

bool is_sink_name(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

const std::string* get(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The seed's boolean rule: set and not "0" is on.
bool seed_on(const std::string& v) {
  return v != "0";
}

// `~` and `~/...` as FastVideo reads its paths (os.path.expanduser): the
// shell leaves a quoted `~` alone.
std::string expand_home(const std::string& path, const Environment& env) {
  const std::string* home = get(env, "HOME");
  if (home == nullptr || home->empty() || path.empty() || path[0] != '~') return path;
  if (path.size() > 1 && path[1] != '/') return path;  // ~user: not ours to resolve
  return *home + path.substr(1);
}

// Read by the project's scripts (scripts/python_env.sh, build.sh,
// gpu_check.sh), never by the configuration, and exported by users who
// follow those scripts' docs: not an unknown variable (an exported
// REGIONTRACE_PYTHON stopped every program of a GPU check).
bool is_script_variable(const std::string& name) {
  return name == "REGIONTRACE_PYTHON" || name == "REGIONTRACE_VENV" ||
         name == "REGIONTRACE_TARGETS";
}

}  // namespace

const std::vector<std::string>& core_variable_names() {
  // REGIONTRACE_TEST_CLOCK_SHIFT_NS is read by sdk::clock_sync::read(), not
  // by the configuration: known here so that it is no "unknown variable".
  static const std::vector<std::string> names = {
      "REGIONTRACE_CONFIG",         "REGIONTRACE_SINKS",
      "REGIONTRACE_REGIONS",        "REGIONTRACE_OUTPUT_DIR",
      "REGIONTRACE_PLUGIN_PATH",    "REGIONTRACE_LOG_LEVEL",
      "REGIONTRACE_HANDLE_SIGNALS", "REGIONTRACE_FLUSH_INTERVAL_S",
      "REGIONTRACE_CATALOGS",       "REGIONTRACE_ON_ERROR",
      "REGIONTRACE_RANKS",          "REGIONTRACE_TEST_CLOCK_SHIFT_NS"};
  return names;
}

const std::vector<std::string>& seed_variable_names() {
  static const std::vector<std::string> names = {"FASTVIDEO_TORCH_PROFILER_DIR",
                                                 "FASTVIDEO_TORCH_PROFILE_REGIONS",
                                                 "FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES",
                                                 "FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY",
                                                 "FASTVIDEO_TORCH_PROFILER_WITH_STACK",
                                                 "FASTVIDEO_TORCH_PROFILER_WITH_FLOPS",
                                                 "FASTVIDEO_NVTX_PROFILE",
                                                 "FASTVIDEO_TRACE_ACTIVATIONS",
                                                 "FASTVIDEO_TRACE_LAYERS",
                                                 "FASTVIDEO_TRACE_STATS",
                                                 "FASTVIDEO_TRACE_OUTPUT",
                                                 "FASTVIDEO_TRACE_STEPS"};
  return names;
}

std::vector<std::string> profiles_from_environment(const Environment& env) {
  const std::string* v = get(env, "REGIONTRACE_CONFIG");
  return v == nullptr ? std::vector<std::string>{} : split_list(*v, ':');
}

void apply_core_environment(const Environment& env, ConfigTree& tree,
                            std::vector<std::string>* errors) {
  // Types are checked at validation, where the source is named; only what
  // cannot become a key is refused here.
  if (const std::string* v = get(env, "REGIONTRACE_SINKS")) {
    std::vector<std::string> wanted;
    for (const std::string& s : split_list(*v)) {
      if (is_sink_name(s)) {
        wanted.push_back(s);
      } else if (errors != nullptr) {
        // `.` or `./my_sink.so` would otherwise become a key path and be
        // dropped without a word.
        errors->push_back("`" + s + "` in REGIONTRACE_SINKS (env) is not a sink name (letters, " +
                          "digits, `_` and `-`): name the sink, e.g. REGIONTRACE_SINKS=timeline, " +
                          "and give a plugin's file or folder in REGIONTRACE_PLUGIN_PATH");
      }
    }
    // The variable names exactly the sinks that run; a profile's other sinks
    // keep their settings but stay off.
    for (const std::string& s : tree.keys("sinks")) {
      if (std::find(wanted.begin(), wanted.end(), s) == wanted.end()) {
        tree.set("sinks." + s + ".enabled", "false", env_source("REGIONTRACE_SINKS"));
      }
    }
    for (const std::string& s : wanted) {
      tree.set("sinks." + s + ".enabled", "true", env_source("REGIONTRACE_SINKS"));
    }
  }
  if (const std::string* v = get(env, "REGIONTRACE_REGIONS")) {
    tree.set_list("regions", split_list(*v), env_source("REGIONTRACE_REGIONS"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_RANKS")) {
    tree.set_list("ranks", split_list(*v), env_source("REGIONTRACE_RANKS"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_OUTPUT_DIR")) {
    tree.set("output_dir", *v, env_source("REGIONTRACE_OUTPUT_DIR"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_PLUGIN_PATH")) {
    tree.set_list("plugins.paths", split_list(*v, ':'), env_source("REGIONTRACE_PLUGIN_PATH"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_LOG_LEVEL")) {
    tree.set("log_level", *v, env_source("REGIONTRACE_LOG_LEVEL"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_CATALOGS")) {
    tree.set_list("catalogs", split_list(*v, ':'), env_source("REGIONTRACE_CATALOGS"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_FLUSH_INTERVAL_S")) {
    tree.set("flush_interval_s", *v, env_source("REGIONTRACE_FLUSH_INTERVAL_S"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_HANDLE_SIGNALS")) {
    tree.set("handle_signals", *v, env_source("REGIONTRACE_HANDLE_SIGNALS"));
  }
  if (const std::string* v = get(env, "REGIONTRACE_ON_ERROR")) {
    tree.set("on_error", *v, env_source("REGIONTRACE_ON_ERROR"));
  }
}

void apply_seed_environment(const Environment& env, ConfigTree& tree,
                            std::vector<std::string>* errors) {
  const std::string tp = "sinks.torch_profiler.";
  // FastVideo builds its profiler only when FASTVIDEO_TORCH_PROFILER_DIR is
  // set: the other FASTVIDEO_TORCH_PROFILE* variables shape a profiler that
  // is on, and turn none on.
  const bool tp_section_before = tree.find("sinks.torch_profiler") != nullptr;
  bool tp_switched_on = false;
  if (const std::string* v = get(env, "FASTVIDEO_TORCH_PROFILER_DIR"); v && !v->empty()) {
    const std::string src = env_source("FASTVIDEO_TORCH_PROFILER_DIR");
    const std::string dir = expand_home(*v, env);
    if (!std::filesystem::path(dir).is_absolute()) {
      errors->push_back("FASTVIDEO_TORCH_PROFILER_DIR=`" + *v +
                        "`: must be an absolute directory path (for example "
                        "/mnt/traces/fastvideo)");
    } else {
      tree.set(tp + "enabled", "true", src);
      tree.set(tp + "output_dir", dir, src);
      tree.set(tp + "prefix", "fastvideo", src);
      // The folder as FastVideo leaves it: its trace and summary names,
      // nothing else (its tests take any other *.json* for the trace).
      tree.set(tp + "layout", "fastvideo", src);
      tree.set(tp + "config_snapshot", "false", src);
      tp_switched_on = true;
    }
  }
  if (const std::string* v = get(env, "FASTVIDEO_TORCH_PROFILE_REGIONS")) {
    tree.set_list(tp + "regions", split_list(*v), env_source("FASTVIDEO_TORCH_PROFILE_REGIONS"));
  }
  const std::pair<const char*, const char*> knobs[] = {
      {"FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES", "record_shapes"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY", "profile_memory"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_STACK", "with_stack"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_FLOPS", "with_flops"}};
  for (const auto& [var, key] : knobs) {
    if (const std::string* v = get(env, var)) {
      tree.set(tp + key, seed_on(*v) ? "true" : "false", env_source(var));
    }
  }
  if (!tp_switched_on && !tp_section_before && tree.find("sinks.torch_profiler") != nullptr) {
    tree.set(tp + "enabled", "false",
             "env FASTVIDEO_TORCH_PROFILE* without FASTVIDEO_TORCH_PROFILER_DIR");
  }
  if (const std::string* v = get(env, "FASTVIDEO_NVTX_PROFILE")) {
    const std::string src = env_source("FASTVIDEO_NVTX_PROFILE");
    tree.set("sinks.nvtx.enabled", seed_on(*v) ? "true" : "false", src);
    if (seed_on(*v)) tree.set("sinks.nvtx.prefix", "fastvideo", src);
  }
  const std::string at = "sinks.activation_trace.";
  // The seed's family is switched on by FASTVIDEO_TRACE_ACTIVATIONS alone: its
  // other variables only shape a trace that something else turned on.
  const bool section_before = tree.find("sinks.activation_trace") != nullptr;
  const std::string* seed_switch = get(env, "FASTVIDEO_TRACE_ACTIVATIONS");
  if (const std::string* v = seed_switch) {
    tree.set(at + "enabled", seed_on(*v) ? "true" : "false",
             env_source("FASTVIDEO_TRACE_ACTIVATIONS"));
  }
  if (const std::string* v = get(env, "FASTVIDEO_TRACE_LAYERS")) {
    tree.set(at + "layers", *v, env_source("FASTVIDEO_TRACE_LAYERS"));
  }
  if (const std::string* v = get(env, "FASTVIDEO_TRACE_STATS")) {
    tree.set_list(at + "stats", split_list(*v), env_source("FASTVIDEO_TRACE_STATS"));
  }
  if (const std::string* v = get(env, "FASTVIDEO_TRACE_OUTPUT"); v && !v->empty()) {
    // `<pid>` stays for the sink, which replaces it: a name that holds the
    // pid is one process's already, and gets no `_rank<r>` added (FastVideo
    // writes exactly the name it was given).
    const std::string path = expand_home(*v, env);
    tree.set(at + "output", path, env_source("FASTVIDEO_TRACE_OUTPUT"));
    // Nothing beside it FastVideo would not write: no configuration snapshot,
    // and the sink's folder is the file's own, not ./regiontrace_out.
    tree.set(at + "config_snapshot", "false", env_source("FASTVIDEO_TRACE_OUTPUT"));
    const std::string parent = std::filesystem::path(path).parent_path().string();
    tree.set(at + "output_dir", parent.empty() ? "." : parent,
             env_source("FASTVIDEO_TRACE_OUTPUT"));
    // FastVideo opens it with "a": a run adds to what is there.
    tree.set(at + "append", "true", env_source("FASTVIDEO_TRACE_OUTPUT"));
    // The seed's readers index rec["module"] on every line, and FastVideo
    // writes nothing beside its file.
    tree.set(at + "summary", "none", env_source("FASTVIDEO_TRACE_OUTPUT"));
  }
  if (const std::string* v = get(env, "FASTVIDEO_TRACE_STEPS")) {
    tree.set_list(at + "steps", split_list(*v), env_source("FASTVIDEO_TRACE_STEPS"));
  }
  if (seed_switch == nullptr && !section_before && tree.find("sinks.activation_trace") != nullptr) {
    tree.set(at + "enabled", "false", "env FASTVIDEO_TRACE_* without FASTVIDEO_TRACE_ACTIVATIONS");
  }
}

void apply_sink_environment(const Environment& env, const std::vector<std::string>& known_sinks,
                            ConfigTree& tree, std::vector<std::string>* errors) {
  const std::string prefix = "REGIONTRACE_";
  const std::vector<std::string>& core = core_variable_names();
  // Where a sink list was given (REGIONTRACE_SINKS, a profile's sinks, the
  // seed's switches), exactly those sinks run: a variable for another sink
  // is kept but does not turn it on.
  const std::vector<std::string> listed = tree.keys("sinks");
  const bool list_given = get(env, "REGIONTRACE_SINKS") != nullptr || !listed.empty();
  for (const auto& [name, value] : env) {
    if (name.rfind(prefix, 0) != 0) continue;
    if (std::find(core.begin(), core.end(), name) != core.end()) continue;
    if (is_script_variable(name)) continue;
    const std::string rest = lower(name.substr(prefix.size()));
    // Sink names hold underscores too: take the longest sink name that fits.
    std::string sink;
    for (const std::string& s : known_sinks) {
      if (rest.size() > s.size() + 1 && rest.compare(0, s.size(), s) == 0 &&
          rest[s.size()] == '_' && s.size() > sink.size()) {
        sink = s;
      }
    }
    if (sink.empty()) {
      std::vector<std::string> candidates = core;
      for (const std::string& s : known_sinks) {
        std::string upper = s;
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return std::toupper(c); });
        candidates.push_back(prefix + upper + "_<KEY>");
      }
      errors->push_back("environment variable " + name + ": no sink or setting of that name" +
                        did_you_mean(name, core) + "; valid: " + join(candidates, ", "));
      continue;
    }
    const std::string key = rest.substr(sink.size() + 1);
    const bool unlisted =
        list_given && std::find(listed.begin(), listed.end(), sink) == listed.end();
    tree.set("sinks." + sink + "." + key, value, env_source(name));
    if (unlisted && key != "enabled") {
      tree.set("sinks." + sink + ".enabled", "false",
               env_source(name) + " (set, but " + sink + " is not among the sinks that run)");
      log_once(LogLevel::kWarn, "unlisted:" + name,
               "environment variable " + name + " is set but sink `" + sink +
                   "` is not enabled (the sinks that run: " +
                   (listed.empty() ? std::string("none") : join(listed, ", ")) +
                   "); name it in REGIONTRACE_SINKS or the profile to run it");
    }
  }
}

void apply_overrides(const std::map<std::string, std::string>& values, ConfigTree& tree) {
  for (const auto& [key, value] : values) tree.set(key, value, "program");
}

}  // namespace regiontrace::detail
