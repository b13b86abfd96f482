// The region_stats sink's keys (its schema) and their values, checked.
#pragma once

#include <string>
#include <vector>

#include "regiontrace/plugin.hpp"

namespace regiontrace::region_stats {

enum class TableTarget { kStderr, kFile, kOff };
enum class TablePaths { kIndented, kFull };

// "host:port"; a bare port (or ":port") binds the loopback address only.
struct ListenAddress {
  std::string host;
  int port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};
// Throws std::invalid_argument saying what a valid address looks like.
ListenAddress parse_listen_address(const std::string& value);
// Seconds, strictly increasing and positive; throws std::invalid_argument.
std::vector<double> parse_bucket_bounds(const std::vector<std::string>& items);

struct RegionStatsSettings {
  TableTarget table = TableTarget::kStderr;
  TablePaths table_paths = TablePaths::kIndented;
  bool json = true;
  long long max_steps = 1000;
  std::string prometheus_listen;  // empty: no endpoint
  std::string prometheus_textfile;
  double prometheus_textfile_interval_s = 10;
  std::vector<double> prometheus_buckets;  // seconds

  static SinkSchema schema();
  // Throws std::invalid_argument naming the key.
  static RegionStatsSettings from(const SinkContext& ctx);
};

}  // namespace regiontrace::region_stats
