// The configuration after merging and validation: typed, defaults filled in,
// every value with its source. This is what `regiontrace check` prints and
// what is written next to the outputs.
#pragma once

#include "regiontrace/export.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../plugin_loader.hpp"
#include "../rank_info.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/config_schema.hpp"
#include "regiontrace/sdk/sink_context.hpp"

namespace regiontrace::detail {

// What the implicit start (the first region) does with a configuration error;
// an explicit init() always throws.
enum class OnError { kExit, kContinue };

struct EffectiveValue {
  std::string key;  // dotted: "sinks.nvtx.domain"
  KeyType type = KeyType::kString;
  std::vector<std::string> items;  // one item for scalars
  std::string source;
};

struct SinkSettings {
  std::string name;
  bool enabled = true;
  const LoadedPlugin* plugin = nullptr;  // null when not loaded (disabled sink)
  std::vector<std::string> regions;
  std::string regions_origin;  // "sinks.nvtx.regions (profile.yaml:7)"
  std::vector<long long> steps;
  std::vector<long long> ranks;  // empty: every rank
  std::string ranks_origin;      // "`ranks` (env REGIONTRACE_RANKS)"
  std::string output_dir;
  // regiontrace_config/regiontrace_config_rank<r>_pid<p>.json goes into
  // output_dir too.
  bool config_snapshot = true;
  std::map<std::string, std::vector<std::string>> values;  // the sink's own keys

  // Whether the sink is built on `rank`: the one rule start-up and the
  // inspection API both apply.
  bool runs_on(int rank) const {
    return ranks.empty() || std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  }
};

struct EffectiveConfig {
  std::vector<std::string> profiles;
  std::string output_dir;
  std::vector<std::string> regions;
  std::vector<std::string> catalogs;
  std::vector<long long> ranks;  // where sinks run unless their own `ranks` say otherwise
  std::vector<std::string> plugin_paths;
  LogLevel log_level = LogLevel::kInfo;
  bool handle_signals = true;
  OnError on_error = OnError::kExit;
  double flush_interval_s = 1.0;  // kInterestPeriodicFlush sinks; 0: never
  std::vector<SinkSettings> sinks;
  std::vector<PluginFile> plugins;
  std::vector<EffectiveValue> values;
  RankInfo rank;
  long pid = 0;
  // Which start of regiontrace in this process this is (0: the first);
  // a later one names its files apart (SinkContext::output_path).
  int session = 0;
  std::string host;  // gethostname(): pids mean something only on their host
  // (CLOCK_REALTIME, CLOCK_MONOTONIC) read when the sinks started and when
  // they were shut down: `regiontrace merge` places ranks on one wall-clock
  // axis with them. Unset until the run starts (regiontrace check).
  std::optional<sdk::clock_sync::Pair> clock_start;
  std::optional<sdk::clock_sync::Pair> clock_end;

  bool any_sink_enabled() const {
    for (const SinkSettings& s : sinks) {
      if (s.enabled) return true;
    }
    return false;
  }
};

// The subfolder of an output folder that holds the configuration snapshots:
// "<output_dir>/regiontrace_config/regiontrace_config_rank<r>_pid<p>.json".
// Out of the folder itself, which tools that load every *.json and *.gz of
// a folder as a trace (HolisticTraceAnalysis) are pointed at; named as the
// files, so that it says whose it is in any folder (output_dir: . too) and
// what skips regiontrace_config* in a listing skips it.
inline constexpr const char* kConfigSnapshotFolder = "regiontrace_config";

// The effective configuration as JSON: {"rank":..., "pid":..., "host":..., "job_id":...,
// "clockSync": {"start": {...}, "end": {...} or null while running},
// "values": {"key": {"value": ..., "source": "..."}}}. clockSync only once
// the run started.
REGIONTRACE_INTERNAL std::string effective_config_json(const EffectiveConfig& config);
// Plain text table, one key a line with its source (for `regiontrace check`).
REGIONTRACE_INTERNAL std::string effective_config_text(const EffectiveConfig& config);

}  // namespace regiontrace::detail
