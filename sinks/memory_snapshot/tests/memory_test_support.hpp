// What the memory sink's tests share: options that run the sink into a
// folder, and its outputs read back with a real JSON parser.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::memory::test {

using nlohmann::json;

// The built-in memory_snapshot sink writing into `dir`, environment ignored;
// `values` are sinks.memory_snapshot.<key> settings.
Options memory_options(const std::string& dir,
                       const std::map<std::string, std::string>& values = {});

// init() now and shutdown() at the end of the scope, also when a test fails
// half-way (a sink left running would turn the next test's init() into a
// no-op). stop() ends it earlier.
class SinkRun {
 public:
  explicit SinkRun(const Options& options) { init(options); }
  ~SinkRun() { shutdown(); }
  SinkRun(const SinkRun&) = delete;
  SinkRun& operator=(const SinkRun&) = delete;
  void stop() { shutdown(); }
};

struct MemoryOutputs {
  std::vector<json> records;    // memory_rank0_pid<p>.jsonl
  json summary;                 // memory_summary_rank0_pid<p>.json
  json trace;                   // memory_trace_rank0_pid<p>.json (null when not written)
  std::vector<json> snapshots;  // memory_snapshot_<n>_rank0_pid<p>.json, in order
  std::vector<std::string> snapshot_files;

  std::vector<json> records_of(const std::string& path) const;
  const json* region_summary(const std::string& path) const;
  std::vector<std::string> leak_suspect_paths() const;
};

// Reads every output in `dir` (one process's); fails the test when one is
// missing or does not parse.
MemoryOutputs read_outputs(const std::string& dir);

// A snapshot's group for `path`, or nullptr.
const json* snapshot_region(const json& snapshot, const std::string& path);

// A region record's libtorch CPU figure: "entry_bytes", "exit_bytes", "peak_bytes".
inline std::int64_t cpu(const json& record, const char* field) {
  return record.at("devices").at("cpu").at(field).get<std::int64_t>();
}

inline constexpr std::int64_t kKiB = 1024;
inline constexpr std::int64_t kMiB = 1024 * 1024;

}  // namespace regiontrace::memory::test
