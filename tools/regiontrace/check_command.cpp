// `regiontrace check [profile.yaml ...]`: everything a program would do at
// start-up (profiles, environment, plugins, validation, region filters), but
// print the outcome instead of running: the effective configuration with the
// source of every value, the sinks that would run and the regions each sees.
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "command.hpp"
#include "regiontrace/inspect.hpp"

namespace regiontrace::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> profiles;
  bool json = false;
};

// A profile that cannot be read, named on the command line or in
// REGIONTRACE_CONFIG, is unreadable input (exit 2), as a missing one is; the
// loader would call it a configuration error (exit 1). A bare name may be a
// shipped profile: `path` becomes its path, which the output then shows.
std::string unreadable_profile(std::string& path) {
  path = inspect::profile_file(path);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "profile " + path + ": no such file";
  if (S_ISDIR(info.st_mode)) return "profile " + path + ": is a folder, not a YAML file";
  if (!S_ISREG(info.st_mode)) {
    return "profile " + path + ": is not a regular file (a FIFO, device or socket)";
  }
  if (::access(path.c_str(), R_OK) != 0) return "profile " + path + ": cannot be read";
  return {};
}

const CLI::Validator kReadableProfile(unreadable_profile, "PROFILE", "readable YAML file");

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ", ") + items[i];
  return out;
}

std::string regions_seen(const inspect::RegionSelection& selection) {
  if (selection.everything) return "all regions";
  std::string out = selection.matched.empty() ? "no declared region yet" : join(selection.matched);
  if (!selection.awaited.empty()) {
    out += "; selected when the program first enters them: " + join(selection.awaited);
  }
  return out + "  (filter: " + selection.filter + ")";
}

int run_check(const CheckArgs& args) {
  inspect::LoadRequest request;
  request.profiles = args.profiles;
  request.environment = inspect::process_environment();
  for (std::string profile : inspect::environment_profiles(request.environment)) {
    const std::string why = unreadable_profile(profile);
    if (!why.empty()) {
      std::cerr << "REGIONTRACE_CONFIG: " << why << "\n";
      return kExitUsage;
    }
  }
  request.validate_disabled_sinks = true;
  const inspect::LoadResult result = inspect::load_configuration(request);
  if (!result.startup_message.empty()) {
    std::cerr << result.startup_message << "\n";
    return kExitFindings;
  }
  const inspect::Configuration& config = result.configuration;
  std::vector<std::string> sink_lines;
  for (const inspect::SinkView& s : config.sinks) {
    std::string line = "  " + s.name;
    if (!s.enabled) {
      sink_lines.push_back(line + ": off");
      continue;
    }
    line +=
        s.runs_on_this_rank ? ": runs" : ": does not run on rank " + std::to_string(config.rank);
    line += " (" + (s.plugin_path.empty() ? std::string("not loaded") : s.plugin_path) + ")";
    line += "\n      regions: " + regions_seen(s.selection);
    if (!s.steps.empty()) line += "\n      steps: " + std::to_string(s.steps.size()) + " selected";
    line += "\n      output: " + s.output_dir;
    sink_lines.push_back(line);
  }
  const std::vector<std::string>& errors = result.errors;
  if (!errors.empty()) {
    std::cerr << errors.size() << " configuration error" << (errors.size() == 1 ? "" : "s") << ":";
    for (const std::string& e : errors) std::cerr << "\n  - " << e;
    std::cerr << "\n";
    return kExitFindings;
  }
  if (args.json) {
    std::cout << config.json;
    return kExitOk;
  }
  std::cout << "profiles: "
            << (config.profiles.empty() ? std::string("(none)") : join(config.profiles))
            << "\nrank " << config.rank << " of " << config.world_size << " (" << config.rank_source
            << ")\n\neffective configuration:\n"
            << config.text << "\nsinks:\n";
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
      ->transform(kReadableProfile);
  cmd->add_flag("--json", args->json, "print the effective configuration as JSON");
  return [args] { return run_check(*args); };
});

}  // namespace
}  // namespace regiontrace::cli
