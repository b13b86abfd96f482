// The layers that fill a ConfigTree, lowest precedence first: YAML profiles,
// environment variables (the seed's FASTVIDEO_* ones, then REGIONTRACE_*),
// programmatic overrides. Defaults come from the schemas at validation.
#pragma once

#include "regiontrace/export.hpp"

#include <map>
#include <string>
#include <vector>

#include "config_tree.hpp"
#include "rank_info.hpp"

namespace regiontrace::detail {

// Merges a YAML profile (after the profiles it `include:`s, relative to its
// folder). Throws regiontrace::Error: file, line, column and the reason.
REGIONTRACE_INTERNAL void load_profile_file(const std::string& path, ConfigTree& tree);
REGIONTRACE_INTERNAL void load_profile_text(const std::string& yaml, const std::string& source,
                                            ConfigTree& tree);

// REGIONTRACE_CONFIG=a.yaml:b.yaml
std::vector<std::string> profiles_from_environment(const Environment& env);

// REGIONTRACE_SINKS, _REGIONS, _OUTPUT_DIR, _PLUGIN_PATH, _LOG_LEVEL,
// _HANDLE_SIGNALS.
void apply_core_environment(const Environment& env, ConfigTree& tree,
                            std::vector<std::string>* errors);
// FASTVIDEO_TORCH_PROFILER_*, FASTVIDEO_NVTX_PROFILE, FASTVIDEO_TRACE_*.
void apply_seed_environment(const Environment& env, ConfigTree& tree,
                            std::vector<std::string>* errors);
// REGIONTRACE_<SINK>_<KEY>=value for the sink names in `known_sinks`.
void apply_sink_environment(const Environment& env, const std::vector<std::string>& known_sinks,
                            ConfigTree& tree, std::vector<std::string>* errors);
void apply_overrides(const std::map<std::string, std::string>& values, ConfigTree& tree);

// Variables applied by the functions above, for suggestions.
REGIONTRACE_INTERNAL const std::vector<std::string>& core_variable_names();
REGIONTRACE_INTERNAL const std::vector<std::string>& seed_variable_names();

}  // namespace regiontrace::detail
