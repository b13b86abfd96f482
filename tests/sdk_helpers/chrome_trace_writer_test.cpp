// The SDK's Chrome-trace writer and event formatter: the documents they make
// parse, hold what was written, and reach the output in whole events.
#include "regiontrace/sdk/chrome_trace_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "regiontrace/sdk/trace_event.hpp"

namespace regiontrace::sdk {
namespace {

using nlohmann::json;

struct Captured {
  std::vector<std::string> pieces;
  std::string text() const {
    std::string all;
    for (const std::string& p : pieces) all += p;
    return all;
  }
};

ChromeTraceWriter::Output into(Captured& c) {
  return [&c](std::string_view text) { c.pieces.emplace_back(text); };
}

void span(ChromeTraceWriter& trace, std::int64_t base, const char* name, std::int64_t begin,
          std::int64_t end, std::int64_t step) {
  TraceEvent e(trace.begin_event(), base, "X", "user_annotation", name, 42, 7);
  e.ts(begin).dur(end - begin);
  e.args().field("step", step).field("path", std::string("a/") + name);
  e.end();
  trace.end_event();
}

TEST(ChromeTraceWriter, WritesADocumentWithEveryKindOfEvent) {
  Captured out;
  const std::int64_t base = 1'000'000'000;
  ChromeTraceWriter trace(into(out));
  trace.begin_document()
      .field("producer", "test")
      .key("distributedInfo")
      .raw_value("{\"rank\": 3, \"world_size\": 4}");
  trace.begin_events(1'700'000'000'000'000'000);
  append_metadata_event(trace.begin_event(), "process_name", 42, 0, "rank 3 \"x\"");
  trace.end_event();
  span(trace, base, "outer", base + 1'500, base + 9'001, 2);
  {
    TraceEvent e(trace.begin_event(), base, "i", "mark", "here", 42, 7);
    e.ts(base + 2'000).field("s", "t");
    e.end();  // no args: none written
    trace.end_event();
  }
  {
    TraceEvent e(trace.begin_event(), base, "C", "", "bytes", 42, 0);
    e.ts(base + 3'000);
    e.args().field("cuda:0", 1024).field("cpu", 2048);
    e.end();
    trace.end_event();
  }
  for (const char* ph : {"s", "f"}) {
    TraceEvent e(trace.begin_event(), base, ph, "ac2g", "ac2g", 42, 7);
    e.ts(base + 4'000).field("id", 9);
    if (ph[0] == 'f') e.field("bp", "e");
    e.end();
    trace.end_event();
  }
  trace.end_events().field("traceName", "t.json");
  trace.end_document();

  const std::string text = out.text();
  EXPECT_EQ(trace.bytes(), text.size());
  EXPECT_EQ(trace.events(), 6u);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["schemaVersion"], 1);
  EXPECT_EQ(doc["producer"], "test");
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  EXPECT_EQ(doc["baseTimeNanoseconds"], 1'700'000'000'000'000'000);
  EXPECT_EQ(doc["traceName"], "t.json");
  // HolisticTraceAnalysis finds the rank by `"rank":\s+(\d+)`: the spacing is kept.
  EXPECT_NE(text.find("\"rank\": 3"), std::string::npos);
  const json& events = doc["traceEvents"];
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0]["args"]["name"], "rank 3 \"x\"");
  EXPECT_FALSE(events[0].contains("cat"));
  EXPECT_EQ(events[1]["ts"].get<double>(), 1.5);
  EXPECT_EQ(events[1]["dur"].get<double>(), 7.501);
  EXPECT_EQ(events[1]["args"]["step"], 2);
  EXPECT_EQ(events[1]["args"]["path"], "a/outer");
  EXPECT_FALSE(events[2].contains("args"));
  EXPECT_EQ(events[2]["s"], "t");
  EXPECT_EQ(events[3]["args"]["cpu"], 2048);
  EXPECT_EQ(events[4]["id"], 9);
  EXPECT_EQ(events[5]["bp"], "e");
  // Kineto's member order: ph, cat, name, pid, tid, ts, dur, then the rest.
  const std::string first_span = text.substr(text.find("{\"ph\":\"X\""));
  EXPECT_EQ(
      first_span.rfind("{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"outer\",\"pid\":42,"
                       "\"tid\":7,\"ts\":1.5,\"dur\":7.501,\"args\":{",
                       0),
      0u);
}

TEST(ChromeTraceWriter, AnEmptyTraceIsValid) {
  Captured out;
  ChromeTraceWriter trace(into(out));
  trace.begin_document();
  trace.begin_events(std::nullopt);
  trace.end_events();
  trace.end_document();
  const json doc = json::parse(out.text());
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_FALSE(doc.contains("baseTimeNanoseconds"));
  EXPECT_EQ(trace.events(), 0u);
}

// A byte budget: format, look at the size, keep or take back.
TEST(ChromeTraceWriter, ACancelledEventLeavesNoTrace) {
  Captured out;
  ChromeTraceWriter trace(into(out));
  trace.begin_document();
  trace.begin_events(0);
  span(trace, 0, "kept", 0, 10, 1);
  trace.begin_event() += "{\"ph\":\"X\",\"name\":\"too big\"}";
  EXPECT_EQ(trace.event_bytes(), trace.separator_bytes() + 27);
  trace.cancel_event();
  span(trace, 0, "also kept", 10, 20, 1);
  trace.end_events();
  trace.end_document();
  const json doc = json::parse(out.text());
  ASSERT_EQ(doc["traceEvents"].size(), 2u);
  EXPECT_EQ(doc["traceEvents"][1]["name"], "also kept");
  EXPECT_EQ(trace.events(), 2u);
  EXPECT_EQ(out.text().find("too big"), std::string::npos);
}

// Streaming (flush after every event): each piece ends where an event ends,
// so a file that keeps whole lines keeps whole events; the events before a
// crash are all there, one a line.
TEST(ChromeTraceWriter, StreamedPiecesEndWithWholeEvents) {
  Captured out;
  ChromeTraceWriter trace(into(out), 0);
  trace.begin_document();
  trace.begin_events(0);
  for (int i = 0; i < 5; ++i) span(trace, 0, "s", i * 10, i * 10 + 5, i);
  ASSERT_EQ(out.pieces.size(), 5u);
  for (const std::string& piece : out.pieces) EXPECT_EQ(piece.back(), '}');
  // What a killed process leaves: every line after the header is one event.
  const std::string text = out.text();
  std::size_t lines = 0;
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) {
    std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    if (!line.empty() && line.back() == ',') line.pop_back();
    EXPECT_EQ(json::parse(line)["ph"], "X");
    ++lines;
  }
  EXPECT_EQ(lines, 5u);
}

// Batched: the output gets nothing until the threshold, then whole events.
TEST(ChromeTraceWriter, BatchesUpToTheFlushSize) {
  Captured out;
  ChromeTraceWriter trace(into(out), 4096);
  trace.begin_document();
  trace.begin_events(0);
  int n = 0;
  while (out.pieces.empty()) {
    span(trace, 0, "s", n * 10, n * 10 + 5, n);
    ++n;
  }
  EXPECT_GE(out.pieces[0].size(), 4096u);
  EXPECT_LT(out.pieces[0].size(), 4096u + 200u);
  EXPECT_EQ(out.pieces[0].back(), '}');
  trace.end_events();
  trace.end_document();
  EXPECT_EQ(json::parse(out.text())["traceEvents"].size(), static_cast<std::size_t>(n));
}

}  // namespace
}  // namespace regiontrace::sdk
