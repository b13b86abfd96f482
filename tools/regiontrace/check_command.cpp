// `regiontrace check [profile.yaml ...]`: everything a program would do at
// start-up (profiles, environment, plugins, validation, region filters), but
// print the outcome instead of running: the effective configuration with the
// source of every value, the sinks that would run and the regions each sees.
#include <algorithm>
#include <iostream>

#include "command.hpp"
#include "config/config_loader.hpp"
#include "region_filter.hpp"
#include "region_registry.hpp"
#include "suggest.hpp"

namespace regiontrace::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> profiles;
  bool json = false;
};

std::string regions_seen(const detail::RegionFilter& filter,
                         const detail::RegionRegistry& registry) {
  if (filter.everything()) return "all regions";
  std::vector<std::string> names;
  for (const detail::RegionEntry* e : registry.declared()) {
    if (filter.matches(e->name)) names.push_back(e->name);
  }
  std::string out = names.empty() ? "no declared region yet" : detail::join(names, ", ");
  if (!filter.awaited().empty()) {
    out += "; selected when the program first enters them: " + detail::join(filter.awaited(), ", ");
  }
  return out + "  (filter: " + filter.describe() + ")";
}

int run_check(const CheckArgs& args) {
  detail::LoadMode mode;
  mode.load_all_plugins = true;
  mode.create_output_dirs = false;
  mode.extra_profiles = args.profiles;
  std::vector<std::string> errors;
  detail::EffectiveConfig config;
  try {
    config = detail::load_configuration(Options{}, detail::capture_environment(), mode);
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return kExitFindings;
  }
  detail::RegionRegistry& registry = detail::RegionRegistry::instance();
  for (const std::string& c : config.catalogs) {
    try {
      detail::load_region_catalog_file(c, registry);
    } catch (const Error& e) {
      errors.push_back(e.what());
    }
  }
  std::vector<std::string> sink_lines;
  for (const detail::SinkSettings& s : config.sinks) {
    std::string line = "  " + s.name;
    if (!s.enabled) {
      sink_lines.push_back(line + ": off");
      continue;
    }
    const bool on_this_rank = s.ranks.empty() || std::find(s.ranks.begin(), s.ranks.end(),
                                                           config.rank.rank) != s.ranks.end();
    const detail::RegionFilter filter =
        detail::RegionFilter::compile(s.regions, s.regions_origin, registry, &errors);
    line += on_this_rank ? ": runs" : ": does not run on rank " + std::to_string(config.rank.rank);
    line += " (" + (s.plugin != nullptr ? s.plugin->path : std::string("not loaded")) + ")";
    line += "\n      regions: " + regions_seen(filter, registry);
    if (!s.steps.empty()) line += "\n      steps: " + std::to_string(s.steps.size()) + " selected";
    line += "\n      output: " + s.output_dir;
    sink_lines.push_back(line);
  }
  if (!errors.empty()) {
    std::cerr << errors.size() << " configuration error" << (errors.size() == 1 ? "" : "s") << ":";
    for (const std::string& e : errors) std::cerr << "\n  - " << e;
    std::cerr << "\n";
    return kExitFindings;
  }
  if (args.json) {
    std::cout << detail::effective_config_json(config);
    return kExitOk;
  }
  std::cout << "profiles: "
            << (config.profiles.empty() ? std::string("(none)")
                                        : detail::join(config.profiles, ", "))
            << "\nrank " << config.rank.rank << " of " << config.rank.world_size << " ("
            << config.rank.source << ")\n\neffective configuration:\n"
            << detail::effective_config_text(config) << "\nsinks:\n";
  if (sink_lines.empty()) std::cout << "  (none: regions cost one atomic load each)\n";
  for (const std::string& l : sink_lines) std::cout << l << "\n";
  std::cout << "\nconfiguration is valid\n";
  return kExitOk;
}

const CommandRegistration registration(10, [](CLI::App& app) -> Runner {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Validate profiles plus the environment as a program would, and show the result");
  cmd->add_option("profiles", args->profiles, "YAML profiles (after REGIONTRACE_CONFIG's)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "print the effective configuration as JSON");
  return [args] { return run_check(*args); };
});

}  // namespace
}  // namespace regiontrace::cli
