#include "kineto_trace_splicer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace regiontrace::torch_profiler {
namespace {

using nlohmann::json;
using regiontrace::test::TempDir;
using regiontrace::test::write_file;

// Shaped like libtorch's ProfilerResult::save() output (Kineto).
const char* kKinetoTrace = R"({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "GPU"}],
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 5, "tid": 9, "ts": 10.5, "dur": 3},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 12, "dur": 1}
  ],
  "traceName": "x.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000
})";

json splice(const std::string& trace, const std::string& events, bool gzip, bool* ok) {
  TempDir dir;
  write_file(dir.file("in.json"), trace);
  OutputFile out(dir.file("out.json"), gzip);
  *ok = splice_trace_events(dir.file("in.json"), events, out);
  if (!*ok) return json();
  out.commit();
  return json::parse(read_maybe_gzip(dir.file("out.json")));
}

TEST(KinetoTraceSplicer, ReadsTheBaseTimeFromTheTail) {
  TempDir dir;
  write_file(dir.file("t.json"), kKinetoTrace);
  EXPECT_EQ(read_base_time_ns(dir.file("t.json")), 1700000000000000000);
  write_file(dir.file("old.json"), R"({"traceEvents": []})");
  EXPECT_EQ(read_base_time_ns(dir.file("old.json")), 0);
}

TEST(KinetoTraceSplicer, InsertsEventsAndKeepsEverythingElse) {
  for (const bool gzip : {false, true}) {
    bool ok = false;
    const json t = splice(kKinetoTrace,
                          R"({"ph":"X","name":"regiontrace.region::a","ts":1,"dur":20},)"
                          R"({"ph":"i","name":"regiontrace.profiler.enable_collection","ts":1})",
                          gzip, &ok);
    ASSERT_TRUE(ok);
    ASSERT_EQ(t["traceEvents"].size(), 4u);
    EXPECT_EQ(t["traceEvents"][0]["name"], "regiontrace.region::a");
    EXPECT_EQ(t["traceEvents"][2]["name"], "aten::mm");
    EXPECT_EQ(t["deviceProperties"][0]["name"], "GPU");
    EXPECT_EQ(t["baseTimeNanoseconds"], 1700000000000000000);
  }
}

TEST(KinetoTraceSplicer, HandlesAnEmptyEventArray) {
  bool ok = false;
  const json t = splice(R"({"traceEvents" : [ ], "x": 1})", R"({"name":"a"})", false, &ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(t["traceEvents"].size(), 1u);
  EXPECT_EQ(t["x"], 1);
  const json unchanged = splice(kKinetoTrace, "", false, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(unchanged["traceEvents"].size(), 2u);
}

TEST(KinetoTraceSplicer, RefusesFilesWithoutTraceEvents) {
  bool ok = true;
  splice(R"({"something": []})", R"({"name":"a"})", false, &ok);
  EXPECT_FALSE(ok);
}

TEST(KinetoTraceSplicer, StreamsLargeTraces) {
  std::string big = R"({"traceEvents": [)";
  for (int i = 0; i < 60000; ++i) {
    if (i) big += ',';
    big += R"({"ph":"X","name":"op)" + std::to_string(i) + R"(","ts":1,"dur":1})";
  }
  big += "]}";
  ASSERT_GT(big.size(), 2u << 20);  // more than one read chunk
  bool ok = false;
  const json t = splice(big, R"({"name":"first"})", true, &ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(t["traceEvents"].size(), 60001u);
  EXPECT_EQ(t["traceEvents"][0]["name"], "first");
  EXPECT_EQ(t["traceEvents"][60000]["name"], "op59999");
}

}  // namespace
}  // namespace regiontrace::torch_profiler
