// What the region_stats end-to-end tests share: options that run the built
// sink, its JSON file, a plain-socket HTTP client and a parser of the
// Prometheus text format.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::region_stats::test {

using nlohmann::json;

Options stats_options(const std::string& dir,
                      const std::map<std::string, std::string>& values = {});
// The one region_stats_rank0_pid<this pid>.json in `dir`.
json read_stats_json(const std::string& dir);
// The entry of `regions` (an array of region objects) with this path.
const json* region(const json& regions, const std::string& path);

// A port nothing listens on right now (bound to port 0, then released).
int free_port();

struct HttpResponse {
  int status = 0;
  std::string body;
};
// GET over a plain TCP socket to 127.0.0.1:port; nullopt when it cannot connect.
std::optional<HttpResponse> http_get(int port, const std::string& target);
// Sends `pieces` 20 ms apart and returns all the server answered before it
// closed; nullopt when it cannot connect.
std::optional<std::string> http_exchange(int port, const std::vector<std::string>& pieces);

// One sample line of the text exposition format.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
std::vector<Sample> parse_exposition(const std::string& text);
// The sample named `name` whose labels include all of `labels`.
std::optional<double> sample_value(const std::vector<Sample>& samples, const std::string& name,
                                   const std::map<std::string, std::string>& labels);

}  // namespace regiontrace::region_stats::test
