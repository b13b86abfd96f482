// The rule every timeline viewer assumes of a Chrome/Perfetto trace, checked
// the way a viewer reads the file: on one (pid, tid), two complete slices
// ("ph":"X") either nest or do not overlap, in the microsecond values as
// written (ts and ts + dur, compared to the nanosecond). A slice that starts
// inside another and ends after it is what makes Perfetto draw it on the
// wrong level and speedscope leave the outer slice open to the end.
//
// TempDir's destructor applies it to every trace a test leaves in its folder
// (test_support.hpp); tests/support/trace_nesting.py is the same check for
// the Python suites.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace regiontrace::test {

struct NestingReport {
  bool is_trace = false;  // false: not JSON, or no "traceEvents" array
  std::int64_t slices = 0;
  std::int64_t violation_count = 0;
  // The first kMaxListed violations, each naming the pid, tid and both slices.
  std::vector<std::string> violations;
  static constexpr std::size_t kMaxListed = 20;
};

// `trace`: a parsed Chrome trace, the object form ({"traceEvents": [...]}).
NestingReport check_trace_nesting(const nlohmann::json& trace);

// A .json or .json.gz file; a file that is not a Chrome trace comes back
// with is_trace false (tests write broken files on purpose, and JSONL).
NestingReport check_trace_file_nesting(const std::string& path);

struct TraceFileReport {
  std::string path;
  NestingReport report;
};
// Every *.json and *.json.gz under `dir`, recursively, that is a Chrome
// trace; the caller looks at violation_count.
std::vector<TraceFileReport> check_traces_under(const std::string& dir);

// One message for a file with violations: path, count, the listed ones.
std::string describe(const TraceFileReport& file);

}  // namespace regiontrace::test
