// Reading a timeline trace back in the tests: the file, its spans per
// thread, and the nesting rule every regiontrace trace keeps.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace regiontrace::timeline::test {

using json = nlohmann::json;

json read_gzip_json(const std::string& path);

// The one timeline_rank*_pid*.json.gz in `dir` (fails the test otherwise).
std::string only_trace(const std::string& dir);

std::vector<json> events(const json& trace, const std::string& ph);
// X events by (pid, tid).
std::map<std::pair<long, long>, std::vector<json>> spans_by_track(const json& trace);
// On each track, any two spans nest or do not overlap, in the written
// microsecond values: the empty string, or the first pair that does not.
std::string nesting_violation(const json& trace);

}  // namespace regiontrace::timeline::test
