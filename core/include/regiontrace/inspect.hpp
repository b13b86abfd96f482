// Inspection: what a program would do at start-up, without doing it.
//
// The `regiontrace` command line (check, schema, regions) is built on this
// header alone; other tools may use it the same way. Nothing here starts a
// sink: configurations are read and validated, plugins are loaded only to
// read their schemas, region catalogs are declared in this process's region
// registry as a program's first region would.
//
//   #include <regiontrace/inspect.hpp>
//
//   namespace ri = regiontrace::inspect;
//   ri::LoadRequest req;
//   req.profiles = {"profile.yaml"};
//   req.environment = ri::process_environment();
//   const ri::LoadResult r = ri::load_configuration(req);
//   if (!r.ok()) { for (const auto& e : r.errors) std::cerr << e << "\n"; }
//
// Plain value types (std::string, std::vector): callers link the same
// libregiontrace they inspect; this is not part of the plugin ABI.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "regiontrace/export.hpp"

namespace regiontrace::inspect {

// Variable name -> value.
using Environment = std::map<std::string, std::string>;

// This process's environment, as a program's start-up reads it.
REGIONTRACE_API Environment process_environment();

// ---------------------------------------------------------------------------
// Configuration

struct LoadRequest {
  // Profiles read after REGIONTRACE_CONFIG's (as Options::profiles).
  std::vector<std::string> profiles;
  // The variables a program would see (REGIONTRACE_*, FASTVIDEO_*, RANK...).
  Environment environment;
  // Load and validate disabled sinks too (what `regiontrace check` does);
  // false: only the sinks that would run, as a program does.
  bool validate_disabled_sinks = true;
};

// One key of the effective configuration.
struct Setting {
  std::string key;                 // dotted: "sinks.nvtx.domain"
  std::string type;                // "string", "int", "list", ...
  std::vector<std::string> items;  // one item for scalars
  std::string source;              // "profile.yaml:7", "env REGIONTRACE_SINKS", "default"
};

// Which regions a sink sees, as far as the catalogs declare them.
struct RegionSelection {
  bool everything = true;            // no filter: every region
  std::vector<std::string> matched;  // declared regions the filter selects
  std::vector<std::string> awaited;  // exact names no region has yet
  std::string filter;                // the filter in words
};

struct SinkView {
  std::string name;
  bool enabled = false;
  bool runs_on_this_rank = false;  // enabled, and this rank is among `ranks` (or they are empty)
  std::string plugin_path;         // empty when not loaded
  std::vector<std::string> regions;
  std::string regions_origin;  // "`sinks.nvtx.regions` (profile.yaml:7)"
  std::vector<long long> steps;
  std::vector<long long> ranks;
  std::string output_dir;
  RegionSelection selection;  // filled for enabled sinks
};

struct Configuration {
  std::vector<std::string> profiles;  // every profile read, includes first
  int rank = 0;
  int world_size = 1;
  std::string rank_source;  // the variable that gave the rank
  std::vector<std::string> catalogs;
  std::vector<Setting> settings;
  std::vector<SinkView> sinks;
  // The same configuration as a program writes it next to its outputs
  // (JSON) and as `regiontrace check` prints it (one key a line).
  std::string json;
  std::string text;
};

struct LoadResult {
  Configuration configuration;  // complete only when ok()
  // Every problem found, one message each, naming file, line and key.
  std::vector<std::string> errors;
  // For the errors of reading and validating the configuration: the message
  // a program prints at start-up (empty when those succeeded). Catalog and
  // region filter problems, found afterwards, are only in `errors`.
  std::string startup_message;

  bool ok() const { return errors.empty(); }
};

// Profiles, environment and plugins as init() reads them; validates, loads
// the configured catalogs and compiles every enabled sink's region filter.
// Starts no sink and creates no folder (it only checks that output folders
// could be created). Never throws regiontrace::Error: problems are returned.
REGIONTRACE_API LoadResult load_configuration(const LoadRequest& request);

// ---------------------------------------------------------------------------
// Sinks and their schemas

struct SchemaKey {
  std::string name;  // relative to its section: "domain"
  std::string type;  // "string", "int", "list", ...
  std::vector<std::string> choices;
  double min = 0;  // -inf / +inf when unbounded
  double max = 0;
  bool absolute_only = false;  // a path that must be absolute
  bool has_default = false;
  std::string default_value;
  std::string description;
};

// The core's own keys (output_dir, regions, ...), and the keys every sink has
// (sinks.<sink>.enabled, .regions, ...).
REGIONTRACE_API std::vector<SchemaKey> core_keys();
REGIONTRACE_API std::vector<SchemaKey> common_sink_keys();

// <folder of libregiontrace.so>/regiontrace/plugins.
REGIONTRACE_API std::string builtin_sink_folder();

// A profile as a user names it, made into the file a program reads: a path
// that exists or has a folder in it stays as it is; a bare name that is no
// file here is the shipped profile of that name (`quickstart.yaml`, from
// <datadir>/regiontrace/profiles beside this library) when there is one.
REGIONTRACE_API std::string profile_file(const std::string& name);

// The profiles REGIONTRACE_CONFIG names in `environment`, in order, as given.
REGIONTRACE_API std::vector<std::string> environment_profiles(const Environment& environment);

// The sinks running in this process now (not switched off by a failure), in
// start order; empty before init() and after shutdown().
REGIONTRACE_API std::vector<std::string> running_sinks();

struct SinkFile {
  std::string name;
  std::string path;
  std::string origin;  // the setting that named its folder
  // Why a run would not load it (another ABI, no plugin of ours, its name
  // taken twice), read from the file without loading it; empty if it would.
  std::string refusal;
};

struct SinkFiles {
  std::vector<SinkFile> sinks;
  std::vector<std::string> errors;  // missing folders, one sink in two files
};

// Sinks on the plugin path: `environment`'s REGIONTRACE_PLUGIN_PATH, then the
// built-in folder. Loads nothing: each file's build-info note says whether a
// run would load it.
REGIONTRACE_API SinkFiles find_sinks(const Environment& environment);

struct PluginSchema {
  std::string name;  // as the plugin declares it
  std::string path;
  std::vector<SchemaKey> keys;  // the sink's own keys
  std::string error;            // why it could not be loaded; keys empty then
};

// Loads the plugin (once per process, never started) to read its schema.
REGIONTRACE_API PluginSchema sink_schema(const SinkFile& sink);

// ---------------------------------------------------------------------------
// Regions

struct RegionInfo {
  std::string name;
  std::string description;
  std::string short_name;  // the name without its catalog's short prefix; empty if none
};

struct RegionList {
  std::vector<RegionInfo> regions;  // every declared region, in declaration order
  std::vector<std::string> errors;  // catalogs that could not be read
};

// Declares `catalogs` (after the built-in ones) and lists the declared regions.
REGIONTRACE_API RegionList list_regions(const std::vector<std::string>& catalogs);

}  // namespace regiontrace::inspect
