#include "trace_identity.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <simdjson.h>

#include <cstdio>
#include <regex>
#include <stdexcept>

#include "dom_fields.hpp"

namespace regiontrace::cli {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::optional<object> parse_object(simdjson::dom::parser& parser, const std::string& path,
                                   const std::string& key, const std::string& text) {
  element root;
  if (parser.parse(text).get(root)) {
    throw std::runtime_error(path + ": top-level member \"" + key + "\" is not valid JSON");
  }
  object o;
  if (root.get_object().get(o)) return std::nullopt;
  return o;
}

std::optional<std::int64_t> pair_offset(object sync, const char* which) {
  object pair;
  if (sync[which].get_object().get(pair)) return std::nullopt;
  auto real = integer_field(pair, "realtime_ns");
  auto mono = integer_field(pair, "monotonic_ns");
  if (!real || !mono) return std::nullopt;
  return *real - *mono;
}

}  // namespace

TraceIdentity identify_trace(const std::string& path,
                             const std::vector<std::pair<std::string, std::string>>& members) {
  TraceIdentity id;
  simdjson::dom::parser parser;
  for (const auto& [key, text] : members) {
    if (key == "baseTimeNanoseconds") {
      element root;
      std::int64_t value = 0;
      if (parser.parse(text).get(root) || root.get_int64().get(value)) {
        double d = 0;
        if (root.get_double().get(d)) {
          throw std::runtime_error(path + ": \"baseTimeNanoseconds\" is " + text +
                                   ", not an integer number of nanoseconds");
        }
        value = static_cast<std::int64_t>(d);
      }
      id.base_ns = value;
    } else if (key == "regiontrace") {
      auto o = parse_object(parser, path, key, text);
      if (!o) continue;
      if (auto rank = integer_field(*o, "rank")) {
        id.rank = rank;
        id.rank_from = "regiontrace";
      }
      if (auto sink = string_field(*o, "sink")) id.sink = std::string(*sink);
      if (auto pid = integer_field(*o, "pid")) id.pid = pid;
      if (auto host = string_field(*o, "host")) id.host = std::string(*host);
      if (auto cpus = string_field(*o, "cpus")) id.cpus = std::string(*cpus);
      bool incomplete = false;
      if (!(*o)["incomplete"].get_bool().get(incomplete)) id.incomplete = incomplete;
      if (auto until = integer_field(*o, "written_until_ns")) id.written_until_ns = until;
      object sync;
      if (!(*o)["clockSync"].get_object().get(sync)) {
        id.realtime_minus_monotonic_ns = pair_offset(sync, "start");
        if (!id.realtime_minus_monotonic_ns)
          id.realtime_minus_monotonic_ns = pair_offset(sync, "end");
        if (!id.realtime_minus_monotonic_ns) {
          throw std::runtime_error(path +
                                   ": \"regiontrace\".\"clockSync\" has no \"start\" or \"end\" "
                                   "pair of integers {\"realtime_ns\", \"monotonic_ns\"}");
        }
      }
    } else if (key == "distributedInfo") {
      auto o = parse_object(parser, path, key, text);
      if (!o || id.rank_from == "regiontrace") continue;
      if (auto rank = integer_field(*o, "rank")) {
        id.rank = rank;
        id.rank_from = "distributedInfo";
      }
    } else if (key == "otherData") {
      auto o = parse_object(parser, path, key, text);
      if (!o) continue;
      if (string_field(*o, "clock") == std::optional<std::string_view>("CLOCK_REALTIME")) {
        id.ts_is_realtime = true;
      }
      if (auto producer = string_field(*o, "producer"); producer && id.sink.empty()) {
        const auto space = producer->rfind(' ');
        id.sink =
            std::string(space == std::string_view::npos ? *producer : producer->substr(space + 1));
      }
      if (!id.rank) {
        if (auto rank = integer_field(*o, "rank")) {
          id.rank = rank;
          id.rank_from = "otherData";
        }
      }
    }
  }
  // The conventions' baseTimeNanoseconds wins over otherData's older clock note.
  if (id.base_ns && id.realtime_minus_monotonic_ns) id.ts_is_realtime = false;
  return id;
}

std::string unfinished_note(const std::string& path, const TraceIdentity& id) {
  if (!id.incomplete) return "";
  std::string who = id.rank ? "rank " + std::to_string(*id.rank) : std::string("a process");
  if (id.pid) who += " (pid " + std::to_string(*id.pid) + ")";
  std::string kept = "what was recorded until its last flush";
  if (id.written_until_ns && id.base_ns) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f",
                  sdk::units::to_seconds(*id.written_until_ns - *id.base_ns));
    kept = "what was recorded until " + std::string(seconds) + " s after the trace began";
  }
  return path + ": incomplete: " + who +
         " ended without closing regiontrace (killed, e.g. by SIGKILL or the OOM killer, or "
         "ended by os._exit()); the trace holds " +
         kept;
}

std::optional<std::int64_t> rank_from_file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  static const std::regex pattern("rank[-_]?([0-9]+)", std::regex::icase);
  std::optional<std::int64_t> rank;
  for (std::sregex_iterator it(name.begin(), name.end(), pattern), end; it != end; ++it) {
    rank = std::stoll((*it)[1].str());
  }
  return rank;
}

}  // namespace regiontrace::cli
