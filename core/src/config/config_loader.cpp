#include "config_loader.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "../logger.hpp"
#include "../plugin_search_report.hpp"
#include "../suggest.hpp"
#include "config_sources.hpp"
#include "shipped_profiles.hpp"
#include "value_normalizer.hpp"

namespace regiontrace::detail {
namespace {

namespace fs = std::filesystem;

const KeySpec* find_spec(const SinkSchema& schema, const std::string& name) {
  for (const KeySpec& k : schema) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string> spec_names(const SinkSchema& schema) {
  std::vector<std::string> out;
  for (const KeySpec& k : schema) out.push_back(k.name);
  return out;
}

// Proves the nearest existing folder on the way to `dir` is writable,
// without creating anything.
std::string probe_writable_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p(dir);
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) return "cannot be created: no existing parent folder";
  if (!fs::is_directory(p, ec)) return "cannot be created: " + p.string() + " is not a folder";
  if (::access(p.c_str(), W_OK) != 0)
    return "cannot be created: " + p.string() + " is not writable";
  return {};
}

// Creates `dir` and proves a file can be written in it.
std::string check_writable_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot be created: " + ec.message();
  if (!fs::is_directory(dir, ec)) return "exists but is not a folder";
  const fs::path probe = fs::path(dir) / (".regiontrace_probe_" + std::to_string(::getpid()));
  {
    std::ofstream f(probe);
    if (!f) return "is not writable";
  }
  fs::remove(probe, ec);
  return {};
}

// Where a sink was named: REGIONTRACE_SINKS and the seed's variables set only
// keys below the sink, so the sink's own node has no source of its own.
std::string sink_origin(const ConfigTree& tree, const std::string& prefix) {
  const std::string own = tree.source(prefix);
  if (own != tree.source("sinks")) return own;
  for (const std::string& key : tree.keys(prefix)) {
    const std::string below = tree.source(prefix + "." + key);
    if (below != own) return below;
  }
  return own;
}

OnError parse_on_error(const std::vector<std::string>& items) {
  return !items.empty() && items[0] == "continue" ? OnError::kContinue : OnError::kExit;
}

class Validator {
 public:
  Validator(const ConfigTree& tree, const Environment& env, EffectiveConfig& out,
            std::vector<std::string>& errors)
      : tree_(tree), out_(out), errors_(errors) {
    ctx_.rank = out.rank.rank;
    ctx_.local_rank = out.rank.local_rank;
    ctx_.world_size = out.rank.world_size;
    ctx_.job_id = out.rank.job_id;
    ctx_.pid = out.pid;
    ctx_.env = &env;
  }

  // A rank filter's items as numbers; a negative one names no rank.
  std::vector<long long> ranks_of(const std::vector<std::string>& items, const std::string& key) {
    std::vector<long long> out;
    for (const std::string& n : items) {
      const long long r = std::stoll(n);
      if (r < 0) {
        errors_.push_back("`" + key + "` (" + tree_.source(key) + "): " + n +
                          " is not a rank (ranks count from 0; valid: [0, 3], \"0-7:2\", "
                          "\"0,4-5\")");
        continue;
      }
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
    return out;
  }

  // A near spelling first; else `prometheus: {listen: x}` written for the
  // flat `prometheus_listen: x`, or a prefix of several keys.
  std::string suggestion(const std::string& path, const std::string& key,
                         const std::vector<std::string>& names) const {
    if (std::string near = did_you_mean(key, names); !near.empty()) return near;
    const auto valid = [&](const std::string& n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    std::vector<std::string> flat;
    for (const std::string& sub : tree_.keys(path)) {
      if (valid(key + "_" + sub)) flat.push_back("`" + key + "_" + sub + "`");
    }
    if (!flat.empty()) {
      return " (did you mean " + join(flat, ", ") + "? these keys are flat, not nested under `" +
             key + "`)";
    }
    std::vector<std::string> prefixed;
    for (const std::string& n : names) {
      if (n.rfind(key + "_", 0) == 0) prefixed.push_back("`" + n + "`");
    }
    return prefixed.empty() ? "" : " (did you mean " + join(prefixed, " or ") + "?)";
  }

  // Validates the keys of one map node against `schema`, records every value
  // (given or default) in out_.values, and returns the canonical items.
  std::map<std::string, std::vector<std::string>> section(const std::string& prefix,
                                                          const SinkSchema& schema,
                                                          const std::set<std::string>& skip) {
    std::map<std::string, std::vector<std::string>> values;
    for (const std::string& key : tree_.keys(prefix)) {
      if (skip.count(key) != 0) continue;
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      if (find_spec(schema, key) == nullptr) {
        std::vector<std::string> names = spec_names(schema);
        names.insert(names.end(), skip.begin(), skip.end());
        errors_.push_back("unknown key `" + path + "` (" + tree_.source(path) + ")" +
                          suggestion(path, key, names) + "; valid keys here: " + join(names, ", "));
      }
    }
    for (const KeySpec& spec : schema) {
      const std::string path = prefix.empty() ? spec.name : prefix + "." + spec.name;
      const ConfigTree::Node* node = tree_.find(path);
      EffectiveValue ev;
      ev.key = path;
      ev.type = spec.type;
      if (node != nullptr) {
        ev.source = tree_.source(path);
        auto items = normalize_value(spec, *node, path, ev.source, ctx_, &errors_);
        if (!items) continue;
        ev.items = *items;
      } else {
        if (!spec.has_default) continue;
        ev.source = "default";
        ev.items = default_items(spec);
        if (spec.type == KeyType::kPath) {
          for (std::string& p : ev.items) {
            auto expanded = expand_placeholders(p, path, ev.source, ctx_, &errors_);
            if (expanded && !expanded->empty()) {
              p = fs::absolute(*expanded).lexically_normal().string();
            }
          }
        }
      }
      values[spec.name] = ev.items;
      out_.values.push_back(std::move(ev));
    }
    return values;
  }

  void core() {
    auto v = section("", core_schema(), {"sinks", "plugins", "include"});
    out_.output_dir = v["output_dir"].empty() ? "" : v["output_dir"][0];
    ctx_.output_dir = out_.output_dir;
    out_.regions = v["regions"];
    out_.catalogs = v["catalogs"];
    out_.ranks = ranks_of(v["ranks"], "ranks");
    bool ok = true;
    out_.log_level = parse_log_level(v["log_level"].empty() ? "info" : v["log_level"][0], &ok);
    out_.handle_signals = v["handle_signals"].empty() || v["handle_signals"][0] == "true";
    out_.on_error = parse_on_error(v["on_error"]);
    // Checked against the schema above; what fails that check is reported there.
    out_.flush_interval_s = v["flush_interval_s"].empty()
                                ? 1.0
                                : std::strtod(v["flush_interval_s"][0].c_str(), nullptr);
    static const SinkSchema plugins = {
        KeySpec::list("paths", "", "extra folders (or .so files) to load sinks from")};
    auto p = section("plugins", plugins, {});
    out_.plugin_paths = p["paths"];
    for (const std::string& k : tree_.keys("sinks")) {
      const ConfigTree::Node* n = tree_.find("sinks." + k);
      if (n != nullptr && (ConfigTree::is_list(*n) || !n->data().empty())) {
        errors_.push_back("`sinks." + k + "` (" + tree_.source("sinks." + k) +
                          ") must be a map of settings (or empty)");
      }
    }
  }

 private:
  const ConfigTree& tree_;
  EffectiveConfig& out_;
  std::vector<std::string>& errors_;
  ExpansionContext ctx_;
};

std::vector<std::pair<std::string, std::string>> plugin_search_path(const ConfigTree& tree) {
  std::vector<std::pair<std::string, std::string>> dirs;
  if (const ConfigTree::Node* n = tree.find("plugins.paths")) {
    const std::string src = tree.source("plugins.paths");
    for (const std::string& d : ConfigTree::items(*n)) dirs.emplace_back(d, src);
  }
  const std::string builtin = PluginLoader::builtin_dir();
  std::error_code ec;
  if (!builtin.empty() && fs::is_directory(builtin, ec))
    dirs.emplace_back(builtin, kBuiltinSinksOrigin);
  return dirs;
}

std::vector<std::string> names_of(const std::vector<PluginFile>& files) {
  std::vector<std::string> out;
  for (const PluginFile& f : files) {
    if (!f.sink_name.empty()) out.push_back(f.sink_name);
  }
  return out;
}

ConfigTree merged_tree(const Options& options, const Environment& env, const LoadMode& mode,
                       std::vector<PluginFile>* plugins, std::vector<std::string>* profiles,
                       std::vector<std::string>* errors) {
  ConfigTree tree;
  std::vector<std::string> files;
  if (options.read_environment) files = profiles_from_environment(env);
  files.insert(files.end(), mode.extra_profiles.begin(), mode.extra_profiles.end());
  files.insert(files.end(), options.profiles.begin(), options.profiles.end());
  for (const std::string& f : files) {
    try {
      load_profile_file(f, tree);
    } catch (const Error& e) {
      errors->push_back(e.what());
    }
  }
  // As read: a shipped profile named by its bare name shows its path.
  profiles->clear();
  for (const std::string& f : files) profiles->push_back(resolve_profile_path(f));
  if (options.read_environment) {
    apply_core_environment(env, tree, errors);
    apply_seed_environment(env, tree, errors);
  }
  // Programmatic plugin paths count before discovery, like the others.
  for (const auto& [k, v] : options.values) {
    if (k == "plugins.paths") tree.set_list(k, split_list(v, ':'), "program");
  }
  *plugins = PluginLoader::discover(plugin_search_path(tree), errors);
  if (options.read_environment) {
    std::vector<std::string> known = names_of(*plugins);
    for (const std::string& s : tree.keys("sinks")) {
      if (std::find(known.begin(), known.end(), s) == known.end()) known.push_back(s);
    }
    apply_sink_environment(env, known, tree, errors);
  }
  apply_overrides(options.values, tree);
  return tree;
}

}  // namespace

const SinkSchema& core_schema() {
  static const SinkSchema schema = {
      KeySpec::path("output_dir", "regiontrace_out",
                    "where sinks write (relative paths are taken from the working folder)"),
      KeySpec::list("regions", "",
                    "default region filter of every sink: names, short names or globs; "
                    "empty = all regions"),
      KeySpec::list("catalogs", "", "region catalog files (YAML) to load"),
      KeySpec::int_list("ranks", "",
                        "ranks on which sinks run, e.g. [0, 3] or \"0-7:2\"; other ranks start "
                        "no sink; empty = all (a sink's own `ranks` wins)"),
      KeySpec::one_of("log_level", "info", {"debug", "info", "warn", "error", "off"},
                      "what regiontrace itself logs to stderr"),
      KeySpec::boolean("handle_signals", true,
                       "on SIGINT/SIGTERM, flush and close every sink, then let the signal "
                       "take its course"),
      KeySpec::real("flush_interval_s", 1,
                    "how often flight-recording sinks (timeline, region_stats) put what they "
                    "recorded on disk while the program runs, so that a killed process (SIGKILL, "
                    "the OOM killer, os._exit) leaves its files readable; 0: only at shutdown")
          .range(0, 3600),
      KeySpec::one_of("on_error", "exit", {"exit", "continue"},
                      "when the first region finds the configuration wrong: print the error "
                      "and exit with status 2, or print it and continue with sinks off "
                      "(an explicit init() throws instead)"),
  };
  return schema;
}

const SinkSchema& common_sink_schema() {
  static const SinkSchema schema = {
      KeySpec::boolean("enabled", true, "run this sink"),
      KeySpec::list("regions", "", "regions this sink sees (default: the top-level `regions`)")
          .no_default(),
      KeySpec::int_list("steps", "",
                        "steps this sink sees, e.g. [2, 3] or 10-19 (docs/profiling.md, What a "
                        "step is); empty = all"),
      KeySpec::int_list("ranks", "",
                        "ranks this sink runs on, e.g. [0, 3] or \"0-7:2\" (default: the "
                        "top-level `ranks`); empty = all"),
      KeySpec::path("output_dir", "", "where this sink writes (default: the top-level output_dir)")
          .no_default(),
      KeySpec::boolean("config_snapshot", true,
                       "also write regiontrace_config/regiontrace_config_rank<r>_pid<p>.json "
                       "(how the run was configured) into this sink's output_dir; false keeps "
                       "the folder to the sink's own files (FastVideo's layout)"),
  };
  return schema;
}

ConfigTree build_config_tree(const Options& options, const Environment& env,
                             const std::vector<std::string>& known_sinks,
                             std::vector<std::string>* errors) {
  ConfigTree tree;
  for (const std::string& f :
       options.read_environment ? profiles_from_environment(env) : std::vector<std::string>{}) {
    load_profile_file(f, tree);
  }
  for (const std::string& f : options.profiles) load_profile_file(f, tree);
  if (options.read_environment) {
    apply_core_environment(env, tree, errors);
    apply_seed_environment(env, tree, errors);
    apply_sink_environment(env, known_sinks, tree, errors);
  }
  apply_overrides(options.values, tree);
  return tree;
}

namespace {

// One sink's settings from `sinks.<name>`, its plugin loaded (unless it is
// disabled and `mode` does not ask for every plugin), appended to
// out.sinks; what is wrong goes to `errors`.
void add_sink_settings(const std::string& name, const ConfigTree& tree, Validator& v,
                       const LoadMode& mode, const std::vector<std::string>& available,
                       EffectiveConfig& out, std::vector<std::string>& errors) {
  SinkSettings s;
  s.name = name;
  const std::string prefix = "sinks." + name;
  bool enabled = true;
  if (const ConfigTree::Node* e = tree.find(prefix + ".enabled")) {
    if (!parse_bool(e->data(), &enabled)) enabled = true;  // reported by section()
  }
  s.enabled = enabled;
  const PluginFile* file = nullptr;
  for (const PluginFile& f : out.plugins) {
    if (f.sink_name == name) file = &f;
  }
  if (file == nullptr) {
    if (enabled || mode.load_all_plugins) {
      errors.push_back("unknown sink `" + name + "` (" + sink_origin(tree, prefix) + ")" +
                       did_you_mean(name, available) + "; available sinks: " +
                       (available.empty() ? std::string("none found") : join(available, ", ")) +
                       "; folders searched: " + describe_plugin_search(plugin_search_path(tree)) +
                       " (a sink's plugin is regiontrace_sink_<name>.so, found in a folder of "
                       "REGIONTRACE_PLUGIN_PATH or plugins.paths)");
    }
    return;
  }
  if (!enabled && !mode.load_all_plugins) {
    out.sinks.push_back(std::move(s));
    return;
  }
  if (file->ambiguous) return;  // discover() said so; neither file is loaded
  try {
    s.plugin = &PluginLoader::load(*file);
  } catch (const Error& e) {
    errors.push_back(e.what());
    return;
  }
  SinkSchema schema = common_sink_schema();
  for (const KeySpec& k : s.plugin->schema) {
    if (find_spec(common_sink_schema(), k.name) != nullptr) {
      errors.push_back("plugin " + s.plugin->path + " declares key `" + k.name +
                       "`, which every sink already has");
      continue;
    }
    schema.push_back(k);
  }
  auto values = v.section(prefix, schema, {});
  s.regions = tree.has(prefix + ".regions") ? values["regions"] : out.regions;
  s.regions_origin = tree.has(prefix + ".regions")
                         ? "`" + prefix + ".regions` (" + tree.source(prefix + ".regions") + ")"
                         : "`regions` (" + tree.source("regions") + ")";
  for (const std::string& n : values["steps"]) s.steps.push_back(std::stoll(n));
  if (tree.has(prefix + ".ranks")) {
    s.ranks = v.ranks_of(values["ranks"], prefix + ".ranks");
    s.ranks_origin = "`" + prefix + ".ranks` (" + tree.source(prefix + ".ranks") + ")";
  } else {
    s.ranks = out.ranks;
    s.ranks_origin = "`ranks` (" + tree.source("ranks") + ")";
    // Shown (check, the configuration file) as the ranks that apply, with
    // where they came from, not as the sink's empty default.
    for (EffectiveValue& ev : out.values) {
      if (ev.key != prefix + ".ranks" || out.ranks.empty()) continue;
      ev.items.clear();
      for (long long r : out.ranks) ev.items.push_back(std::to_string(r));
      ev.source = s.ranks_origin;
    }
  }
  s.config_snapshot = values["config_snapshot"].empty() || values["config_snapshot"][0] != "false";
  s.output_dir = values.count("output_dir") && !values["output_dir"].empty() &&
                         !values["output_dir"][0].empty()
                     ? values["output_dir"][0]
                     : out.output_dir;
  for (const KeySpec& k : s.plugin->schema) {
    if (values.count(k.name)) s.values[k.name] = values[k.name];
  }
  // The common keys too: the host applies them, but a sink may shape its
  // output by them (the torch profiler writes one trace per run of steps).
  s.values["regions"] = s.regions;
  s.values["steps"] = values["steps"];
  s.values["ranks"].clear();
  for (long long r : s.ranks) s.values["ranks"].push_back(std::to_string(r));
  out.sinks.push_back(std::move(s));
}

// Each enabled sink's output folder can be written (or made).
void check_output_dirs(const EffectiveConfig& out, const ConfigTree& tree, const LoadMode& mode,
                       std::vector<std::string>& errors) {
  for (const SinkSettings& s : out.sinks) {
    if (!s.enabled) continue;
    const std::string why = mode.create_output_dirs ? check_writable_dir(s.output_dir)
                                                    : probe_writable_dir(s.output_dir);
    if (!why.empty()) {
      const bool own = tree.has("sinks." + s.name + ".output_dir");
      const std::string key = own ? "sinks." + s.name + ".output_dir" : "output_dir";
      errors.push_back("output folder " + s.output_dir + " (`" + key + "`, " + tree.source(key) +
                       ") " + why);
    }
  }
}

}  // namespace

EffectiveConfig load_configuration(const Options& options, const Environment& env,
                                   const LoadMode& mode) {
  std::vector<std::string> errors;
  EffectiveConfig out;
  out.pid = static_cast<long>(::getpid());
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) out.host = host;
  out.rank = rank_from_environment(env);
  const ConfigTree tree = merged_tree(options, env, mode, &out.plugins, &out.profiles, &errors);

  Validator v(tree, env, out, errors);
  v.core();

  const std::vector<std::string> available = names_of(out.plugins);
  for (const std::string& name : tree.keys("sinks")) {
    add_sink_settings(name, tree, v, mode, available, out, errors);
  }
  if (errors.empty()) check_output_dirs(out, tree, mode, errors);
  if (!errors.empty()) {
    std::string msg = errors.size() == 1 ? "configuration error: "
                                         : std::to_string(errors.size()) + " configuration errors:";
    if (errors.size() == 1) {
      msg += errors[0];
    } else {
      for (const std::string& e : errors) msg += "\n  - " + e;
    }
    throw ConfigurationError(msg, out.on_error);
  }
  return out;
}

}  // namespace regiontrace::detail
