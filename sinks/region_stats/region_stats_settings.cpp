#include "region_stats_settings.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "regiontrace/sdk/value_checks.hpp"

namespace regiontrace::region_stats {
namespace {

constexpr const char* kDefaultBuckets =
    "0.00001,0.0001,0.0005,0.001,0.0025,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10,30,60";

std::string listen_problem(const std::string& value) {
  if (value.empty()) return {};
  try {
    parse_listen_address(value);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

std::string bound_problem(const std::string& item) {
  try {
    parse_bucket_bounds({item});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

// KeySpec::real writes its default with std::to_string ("10.000000"); the
// reference shows what a user would type.
KeySpec textfile_interval_key() {
  KeySpec k = KeySpec::real("prometheus_textfile_interval_s", 10,
                            "seconds between textfile rewrites while running (0: only at start "
                            "and shutdown)")
                  .range(0, 86400);
  k.default_value = "10";
  return k;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& value) {
  const std::string valid =
      "; valid: host:port with a port in 0-65535, e.g. 127.0.0.1:9464 (a bare port binds "
      "127.0.0.1 only; 0.0.0.0:9464 serves every interface; port 0 takes a free one, logged)";
  ListenAddress a;
  const auto colon = value.rfind(':');
  std::string port_text = value;
  a.host = "127.0.0.1";
  if (colon != std::string::npos) {
    port_text = value.substr(colon + 1);
    if (colon != 0) a.host = value.substr(0, colon);
  }
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') {
    // IPv6 as "[::1]:port": the brackets stay, as a URL writes them.
  } else if (a.host.find_first_of(" /[]") != std::string::npos || a.host.empty()) {
    throw std::invalid_argument("`" + value + "` has no usable host" + valid);
  }
  char* end = nullptr;
  errno = 0;
  const long port = port_text.empty() ? -1 : std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || errno != 0 || end == nullptr || *end != '\0' || port < 0 ||
      port > 65535) {
    throw std::invalid_argument("`" + value + "` has no port in 0-65535" + valid);
  }
  a.port = static_cast<int>(port);
  return a;
}

std::vector<double> parse_bucket_bounds(const std::vector<std::string>& items) {
  std::vector<double> out;
  for (const std::string& item : items) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || errno != 0 || end == nullptr || *end != '\0' || !(v > 0) ||
        v > 86400 * 365.0) {
      throw std::invalid_argument("bucket bound `" + item +
                                  "` is not a positive number of seconds (e.g. 0.005)");
    }
    if (!out.empty() && v <= out.back()) {
      throw std::invalid_argument("bucket bounds must increase: `" + item + "` follows " +
                                  std::to_string(out.back()));
    }
    out.push_back(v);
  }
  return out;
}

SinkSchema RegionStatsSettings::schema() {
  return {
      KeySpec::one_of("table", "stderr", {"stderr", "file", "off"},
                      "where the table is printed at shutdown: stderr, a file "
                      "`region_stats_rank<r>_pid<p>.txt` next to the JSON, or off"),
      KeySpec::one_of("table_paths", "indented", {"indented", "full"},
                      "table rows: nested regions indented under their parent, or full "
                      "`a/b/c` paths sorted by total time"),
      KeySpec::boolean("json", true,
                       "write `region_stats_rank<r>_pid<p>.json` at shutdown (and, marked "
                       "incomplete, at every flush_interval_s while the program runs)"),
      KeySpec::integer("max_steps", 1000,
                       "per-step aggregates are kept for the last this many steps (older "
                       "ones are dropped and counted); 0: no per-step aggregates")
          .range(0, 1000000),
      KeySpec::string("prometheus_listen", "",
                      "serve live metrics on this host:port (`127.0.0.1:9464`; a bare port "
                      "binds loopback only; port 0 takes a free port and logs it); empty: no "
                      "endpoint")
          .checked_by(listen_problem),
      KeySpec::path("prometheus_textfile", "",
                    "write the same metrics to this file for node_exporter's textfile "
                    "collector (replaced atomically); empty: none")
          .absolute()
          .checked_by(sdk::not_a_folder),
      textfile_interval_key(),
      KeySpec::list("prometheus_buckets", kDefaultBuckets,
                    "upper bounds (seconds, increasing) of the "
                    "regiontrace_region_duration_seconds histogram buckets")
          .checked_by(bound_problem),
  };
}

RegionStatsSettings RegionStatsSettings::from(const SinkContext& ctx) {
  RegionStatsSettings s;
  const std::string& table = ctx.get_string("table");
  s.table = table == "file"  ? TableTarget::kFile
            : table == "off" ? TableTarget::kOff
                             : TableTarget::kStderr;
  s.table_paths =
      ctx.get_string("table_paths") == "full" ? TablePaths::kFull : TablePaths::kIndented;
  s.json = ctx.get_bool("json");
  s.max_steps = ctx.get_int("max_steps");
  if (s.max_steps < 0) {
    throw std::invalid_argument("max_steps: " + std::to_string(s.max_steps) +
                                " is negative; give 0 (no per-step aggregates) or more");
  }
  s.prometheus_listen = ctx.get_string("prometheus_listen");
  if (!s.prometheus_listen.empty()) {
    try {
      s.prometheus_listen = parse_listen_address(s.prometheus_listen).text();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("prometheus_listen: ") + e.what());
    }
  }
  s.prometheus_textfile = ctx.get_string("prometheus_textfile");
  s.prometheus_textfile_interval_s = ctx.get_double("prometheus_textfile_interval_s");
  try {
    s.prometheus_buckets = parse_bucket_bounds(ctx.get_list("prometheus_buckets"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("prometheus_buckets: ") + e.what());
  }
  if (s.prometheus_buckets.empty()) {
    throw std::invalid_argument(
        "prometheus_buckets: no bounds given; list upper bounds in seconds, e.g. "
        "0.001,0.01,0.1,1");
  }
  return s;
}

}  // namespace regiontrace::region_stats
