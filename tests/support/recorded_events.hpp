// Reading what the test `recorder` sink wrote, filtered the way tests ask.
#pragma once

#include <string>
#include <vector>

#include "test_support.hpp"

namespace regiontrace::test {

// The region begin/end events as compact strings: "begin outer", "end inner".
inline std::vector<std::string> region_sequence(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    const std::string kind = e["event"];
    if (kind == "begin" || kind == "end") out.push_back(kind + " " + e["name"].get<std::string>());
  }
  return out;
}

inline std::vector<nlohmann::json> events_of(const std::vector<nlohmann::json>& events,
                                             const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const auto& e : events) {
    if (e["event"] == kind) out.push_back(e);
  }
  return out;
}

}  // namespace regiontrace::test
