// The public inspection API (regiontrace/inspect.hpp) over the internals the
// start-up uses: the configuration loader, the plugin loader, the region
// registry and filters. Nothing of those types crosses into the header.
#include "regiontrace/inspect.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "config/config_loader.hpp"
#include "config/config_sources.hpp"
#include "config/config_tree.hpp"
#include "config/effective_config.hpp"
#include "config/shipped_profiles.hpp"
#include "dispatcher.hpp"
#include "plugin_loader.hpp"
#include "rank_info.hpp"
#include "region_filter.hpp"
#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"

namespace regiontrace::inspect {
namespace {

SchemaKey to_key(const KeySpec& k) {
  SchemaKey out;
  out.name = k.name;
  out.type = to_string(k.type);
  out.choices = k.choices;
  out.min = k.min;
  out.max = k.max;
  out.absolute_only = k.absolute_only;
  out.has_default = k.has_default;
  out.default_value = k.default_value;
  out.description = k.description;
  return out;
}

std::vector<SchemaKey> to_keys(const regiontrace::SinkSchema& schema) {
  std::vector<SchemaKey> out;
  out.reserve(schema.size());
  for (const KeySpec& k : schema) out.push_back(to_key(k));
  return out;
}

// load_configuration() reports every problem in one message (see
// config_loader.cpp): "configuration error: <one>" or "<n> configuration
// errors:" followed by "\n  - <each>". A message of another shape is one
// problem as it stands.
std::vector<std::string> split_startup_message(const std::string& message) {
  static const std::string kOne = "configuration error: ";
  static const std::string kItem = "\n  - ";
  if (message.rfind(kOne, 0) == 0) return {message.substr(kOne.size())};
  const std::size_t first = message.find(kItem);
  if (first == std::string::npos || message.find(" configuration errors:") == std::string::npos ||
      message.find(" configuration errors:") > first) {
    return {message};
  }
  std::vector<std::string> out;
  std::size_t at = first;
  while (at != std::string::npos) {
    const std::size_t begin = at + kItem.size();
    const std::size_t next = message.find(kItem, begin);
    out.push_back(message.substr(begin, next == std::string::npos ? next : next - begin));
    at = next;
  }
  return out;
}

RegionSelection selection_of(const detail::RegionFilter& filter,
                             const detail::RegionRegistry& registry) {
  RegionSelection out;
  out.everything = filter.everything();
  if (out.everything) return out;
  for (const detail::RegionEntry* e : registry.declared()) {
    if (filter.matches(e->name)) out.matched.push_back(e->name);
  }
  out.awaited = filter.awaited();
  out.filter = filter.describe();
  return out;
}

}  // namespace

Environment process_environment() {
  return detail::capture_environment();
}

LoadResult load_configuration(const LoadRequest& request) {
  LoadResult result;
  detail::LoadMode mode;
  mode.load_all_plugins = request.validate_disabled_sinks;
  mode.create_output_dirs = false;
  mode.extra_profiles = request.profiles;
  detail::EffectiveConfig config;
  try {
    config = detail::load_configuration(Options{}, request.environment, mode);
  } catch (const detail::ConfigurationError& e) {
    result.startup_message = e.what();
    result.errors = split_startup_message(e.what());
    return result;
  } catch (const Error& e) {
    result.startup_message = e.what();
    result.errors = {e.what()};
    return result;
  }

  Configuration& out = result.configuration;
  out.profiles = config.profiles;
  out.rank = config.rank.rank;
  out.world_size = config.rank.world_size;
  out.rank_source = config.rank.source;
  out.catalogs = config.catalogs;
  for (const detail::EffectiveValue& v : config.values) {
    out.settings.push_back(Setting{v.key, to_string(v.type), v.items, v.source});
  }
  out.json = detail::effective_config_json(config);
  out.text = detail::effective_config_text(config);

  detail::RegionRegistry& registry = detail::RegionRegistry::instance();
  for (const std::string& c : config.catalogs) {
    try {
      detail::load_region_catalog_file(c, registry);
    } catch (const Error& e) {
      result.errors.push_back(e.what());
    }
  }
  for (const detail::SinkSettings& s : config.sinks) {
    SinkView view;
    view.name = s.name;
    view.enabled = s.enabled;
    view.plugin_path = s.plugin != nullptr ? s.plugin->path : std::string();
    view.regions = s.regions;
    view.regions_origin = s.regions_origin;
    view.steps = s.steps;
    view.ranks = s.ranks;
    view.output_dir = s.output_dir;
    if (s.enabled) {
      view.runs_on_this_rank = s.runs_on(config.rank.rank);
      const detail::RegionFilter filter =
          detail::RegionFilter::compile(s.regions, s.regions_origin, registry, &result.errors);
      view.selection = selection_of(filter, registry);
    }
    out.sinks.push_back(std::move(view));
  }
  return result;
}

std::vector<SchemaKey> core_keys() {
  return to_keys(detail::core_schema());
}

std::vector<SchemaKey> common_sink_keys() {
  return to_keys(detail::common_sink_schema());
}

std::string builtin_sink_folder() {
  return detail::PluginLoader::builtin_dir();
}

std::string profile_file(const std::string& name) {
  return detail::resolve_profile_path(name);
}

std::vector<std::string> environment_profiles(const Environment& environment) {
  return detail::profiles_from_environment(environment);
}

std::vector<std::string> running_sinks() {
  std::vector<std::string> names;
  for (const detail::SinkSlot* slot : detail::Dispatcher::instance().running_slots()) {
    if (!slot->failed.load()) names.push_back(slot->name);
  }
  return names;
}

SinkFiles find_sinks(const Environment& environment) {
  std::vector<std::pair<std::string, std::string>> dirs;
  const auto path = environment.find("REGIONTRACE_PLUGIN_PATH");
  if (path != environment.end()) {
    for (const std::string& d : detail::split_list(path->second, ':')) {
      dirs.emplace_back(d, "env REGIONTRACE_PLUGIN_PATH");
    }
  }
  // A build (or prefix) without built-in sinks has no such folder: no
  // sinks from there, as when a run loads its configuration.
  const std::string builtin = detail::PluginLoader::builtin_dir();
  std::error_code ec;
  if (!builtin.empty() && std::filesystem::is_directory(builtin, ec)) {
    dirs.emplace_back(builtin, detail::kBuiltinSinksOrigin);
  }
  SinkFiles out;
  for (detail::PluginFile& f : detail::PluginLoader::discover(dirs, &out.errors)) {
    std::string refusal = detail::PluginLoader::refusal(f);
    out.sinks.push_back(SinkFile{std::move(f.sink_name), std::move(f.path), std::move(f.origin),
                                 std::move(refusal)});
  }
  return out;
}

PluginSchema sink_schema(const SinkFile& sink) {
  PluginSchema out;
  out.name = sink.name;
  out.path = sink.path;
  if (!sink.refusal.empty()) {
    out.error = sink.refusal;  // not loaded: none of its code runs
    return out;
  }
  try {
    const detail::LoadedPlugin& p =
        detail::PluginLoader::load(detail::PluginFile{sink.name, sink.path, sink.origin});
    out.name = p.sink_name;
    out.path = p.path;
    out.keys = to_keys(p.schema);
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

RegionList list_regions(const std::vector<std::string>& catalogs) {
  RegionList out;
  detail::RegionRegistry& registry = detail::RegionRegistry::instance();
  for (const std::string& c : catalogs) {
    try {
      detail::load_region_catalog_file(c, registry);
    } catch (const Error& e) {
      out.errors.push_back(e.what());
    }
  }
  const std::vector<std::string> prefixes = registry.short_prefixes();
  for (const detail::RegionEntry* r : registry.declared()) {
    RegionInfo info{r->name, r->description, {}};
    for (const std::string& p : prefixes) {
      if (r->name.rfind(p, 0) == 0) info.short_name = r->name.substr(p.size());
    }
    out.regions.push_back(std::move(info));
  }
  return out;
}

}  // namespace regiontrace::inspect
