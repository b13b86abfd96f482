#include "trace_nesting_check.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

json slice(const std::string& name, double ts, double dur, int tid = 11, int pid = 7) {
  return {{"ph", "X"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
}

json trace(std::initializer_list<json> events) {
  json t = {{"traceEvents", json::array()}};
  for (const json& e : events) t["traceEvents"].push_back(e);
  return t;
}

// The issue's own example: libtorch 1.13's whole-microsecond stamps put
// aten::copy_ 1 us past the end of the aten::_to_copy that called it.
const char* kIssueTrace = R"({"traceEvents":[
  {"ph":"X","name":"aten::_to_copy","pid":7,"tid":11,"ts":799.895,"dur":16},
  {"ph":"X","name":"aten::copy_","pid":7,"tid":11,"ts":813.895,"dur":3}]})";

TEST(TraceNestingCheck, FindsAChildThatEndsAfterItsParent) {
  const NestingReport r = check_trace_nesting(json::parse(kIssueTrace));
  EXPECT_TRUE(r.is_trace);
  EXPECT_EQ(r.slices, 2);
  ASSERT_EQ(r.violation_count, 1);
  ASSERT_EQ(r.violations.size(), 1u);
  const std::string& v = r.violations[0];
  EXPECT_NE(v.find("pid 7 tid 11"), std::string::npos) << v;
  EXPECT_NE(v.find("\"aten::copy_\" [813.895, 816.895]"), std::string::npos) << v;
  EXPECT_NE(v.find("\"aten::_to_copy\" [799.895, 815.895]"), std::string::npos) << v;
  EXPECT_NE(v.find("ends 1 us after it"), std::string::npos) << v;
}

TEST(TraceNestingCheck, AcceptsNestedTouchingAndEqualSlices) {
  const NestingReport r = check_trace_nesting(trace({
      slice("outer", 0, 100), slice("a", 0, 40),      // same start, shorter: inside
      slice("a.1", 10.5, 29.5),                       // ends exactly where a ends
      slice("b", 40, 60),                             // starts where a ends, ends with outer
      slice("b.empty", 100, 0),                       // zero length at outer's end
      slice("same", 200, 5),                          // two identical slices nest
      slice("same", 200, 5), slice("later", 205, 1),  // touches
  }));
  EXPECT_EQ(r.slices, 8);
  EXPECT_EQ(r.violation_count, 0) << (r.violations.empty() ? "" : r.violations[0]);
}

TEST(TraceNestingCheck, TracksAreSeparateByPidAndTid) {
  const NestingReport r = check_trace_nesting(trace({
      slice("main", 0, 10, 1, 1),
      slice("other thread", 5, 10, 2, 1),   // overlaps, but on another tid
      slice("other process", 5, 10, 1, 2),  // and another pid
  }));
  EXPECT_EQ(r.violation_count, 0);
}

TEST(TraceNestingCheck, ComparesTheWrittenDecimalsExactly) {
  // 0.1 + 0.2 is not 0.3 in binary: the check works in nanoseconds.
  EXPECT_EQ(
      check_trace_nesting(trace({slice("p", 0.1, 0.2), slice("c", 0.2, 0.1)})).violation_count, 0);
  // One nanosecond past the end is a violation.
  EXPECT_EQ(
      check_trace_nesting(trace({slice("p", 0.1, 0.2), slice("c", 0.2, 0.101)})).violation_count,
      1);
}

TEST(TraceNestingCheck, ReportsEveryViolationAndNegativeDurations) {
  const NestingReport r = check_trace_nesting(trace({
      slice("p", 0, 10),
      slice("c1", 5, 10),  // crosses p
      slice("c2", 8, 10),  // crosses p and c1
      slice("neg", 50, -1),
  }));
  EXPECT_EQ(r.violation_count, 4);
  ASSERT_EQ(r.violations.size(), 4u);
  EXPECT_NE(r.violations[0].find("negative dur"), std::string::npos);
}

TEST(TraceNestingCheck, LooksAtCompleteSlicesOnly) {
  const NestingReport r = check_trace_nesting(json::parse(R"({"traceEvents":[
    {"ph":"M","name":"thread_name","pid":7,"tid":11,"args":{"name":"main"}},
    {"ph":"X","name":"p","pid":7,"tid":11,"ts":0,"dur":10},
    {"ph":"i","name":"mark","pid":7,"tid":11,"ts":20,"s":"t"},
    {"ph":"C","name":"bytes","pid":7,"tid":11,"ts":5,"args":{"cpu":1}}]})"));
  EXPECT_EQ(r.slices, 1);
  EXPECT_EQ(r.violation_count, 0);
  EXPECT_FALSE(check_trace_nesting(json::parse(R"({"records":[]})")).is_trace);
}

TEST(TraceNestingCheck, ReadsGzipAndPlainFilesAndSkipsWhatIsNotATrace) {
  TempDir dir;
  dir.allow_nesting_violations();  // the violating files are this test's input
  write_file(dir.file("plain.json"), kIssueTrace);
  write_file(dir.file("sub/notes.txt"), "");
  gzFile gz = gzopen(dir.file("sub/packed.json.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, kIssueTrace, static_cast<unsigned>(std::string(kIssueTrace).size()));
  gzclose(gz);
  write_file(dir.file("broken.json"), "{\"traceEvents\":[");
  write_file(dir.file("records.json"), "{\"summary\":{}}");
  write_file(dir.file("trace.json.partial"), kIssueTrace);

  EXPECT_EQ(check_trace_file_nesting(dir.file("sub/packed.json.gz")).violation_count, 1);
  const std::vector<TraceFileReport> found = check_traces_under(dir.path());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path, dir.file("plain.json"));
  EXPECT_EQ(found[1].path, dir.file("sub/packed.json.gz"));
  for (const TraceFileReport& f : found) EXPECT_EQ(f.report.violation_count, 1);
  EXPECT_NE(describe(found[0]).find("plain.json: 1 slice(s) break the nesting rule"),
            std::string::npos);
}

// The hook itself: a TempDir holding a violating trace fails the test that
// owns it. Run in a child process so that failure is observed, not suffered.
TEST(TraceNestingCheck, TempDirFailsTheTestOnAViolatingTrace) {
  const ChildResult child = run_in_child([] {
    const bool before = ::testing::Test::HasFailure();
    {
      TempDir dir;
      write_file(dir.file("t.json"), kIssueTrace);
    }
    return !before && ::testing::Test::HasFailure() ? 0 : 1;
  });
  ASSERT_TRUE(child.exited);
  EXPECT_EQ(child.exit_code, 0) << "TempDir did not report the violating trace";
}

}  // namespace
}  // namespace regiontrace::test
