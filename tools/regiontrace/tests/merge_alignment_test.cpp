// `regiontrace merge` with regiontrace's own traces: ranks placed on the wall
// clock by their clockSync pairs, --align-on a barrier mark for hosts whose
// clocks disagree, the torch_profiler, timeline and memory traces of one rank
// in one process, and inputs larger than the reader's chunks.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

constexpr std::int64_t kWall0 = 1'750'000'000'000'000'000;  // a realtime reading, ns

struct SinkTrace {
  std::string sink = "torch_profiler";
  int rank = 0;
  int pid = 4242;
  std::int64_t monotonic_base_ns = 5'000'000'000;  // baseTimeNanoseconds
  // The wall clock at the monotonic base, as this host's (maybe wrong) clock says.
  std::int64_t realtime_at_base_ns = kWall0;
  // Region spans (name, ts µs, dur µs) on tid 11; marks (ts µs) named step_barrier.
  std::vector<std::tuple<std::string, double, double>> spans;
  std::vector<double> marks;
};

json sink_trace(const SinkTrace& t) {
  json events = json::array();
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", t.pid},
                    {"tid", 0},
                    {"args", {{"name", "rank " + std::to_string(t.rank)}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", t.pid},
                    {"tid", 11},
                    {"args", {{"name", "main"}}}});
  for (const auto& [name, ts, dur] : t.spans) {
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "region::" + name},
                      {"pid", t.pid},
                      {"tid", 11},
                      {"ts", ts},
                      {"dur", dur},
                      {"args", {{"region", name}, {"path", name}, {"depth", 0}}}});
  }
  for (double ts : t.marks) {
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"cat", "mark"},
                      {"name", "step_barrier"},
                      {"pid", t.pid},
                      {"tid", 11},
                      {"ts", ts}});
  }
  // The pair read at start: 1 ms after the base on the monotonic clock.
  const std::int64_t mono = t.monotonic_base_ns + 1'000'000;
  const std::int64_t real = t.realtime_at_base_ns + 1'000'000;
  json sync = {{"start", {{"realtime_ns", real}, {"monotonic_ns", mono}}},
               {"end", {{"realtime_ns", real + 9'000'000}, {"monotonic_ns", mono + 9'000'000}}}};
  return {{"schemaVersion", 1},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", t.monotonic_base_ns},
          {"regiontrace",
           {{"sink", t.sink},
            {"rank", t.rank},
            {"local_rank", t.rank},
            {"world_size", 2},
            {"pid", t.pid},
            {"clockSync", sync}}},
          {"traceEvents", events}};
}

std::map<std::string, int> process_pids(const json& merged) {
  std::map<std::string, int> pids;
  for (const auto& e : merged["traceEvents"]) {
    if (e.value("ph", "") == "M" && e["name"] == "process_name") {
      pids[e["args"]["name"].get<std::string>()] = e["pid"].get<int>();
    }
  }
  return pids;
}

std::vector<json> named(const json& merged, int pid, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : merged["traceEvents"]) {
    if (e["pid"] == pid && e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

// The nesting rule of the conventions: on each (pid, tid), two X slices nest
// or do not overlap.
void expect_nested(const json& merged) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<double, double>>> tracks;
  for (const auto& e : merged["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const double ts = e["ts"].get<double>();
    tracks[{e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()}].push_back(
        {ts, ts + e["dur"].get<double>()});
  }
  for (const auto& [track, slices] : tracks) {
    for (std::size_t i = 0; i < slices.size(); ++i) {
      for (std::size_t j = i + 1; j < slices.size(); ++j) {
        const auto& [a0, a1] = slices[i];
        const auto& [b0, b1] = slices[j];
        const bool apart = a1 <= b0 || b1 <= a0;
        const bool nest = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
        EXPECT_TRUE(apart || nest) << "pid " << track.first << " tid " << track.second << ": ["
                                   << a0 << "," << a1 << ") and [" << b0 << "," << b1 << ")";
      }
    }
  }
}

class MergeAlignment : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const json& trace) {
    const std::string path = dir_.file(name);
    if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") {
      write_gzip(path, trace.dump());
    } else {
      write_file(path, trace.dump());
    }
    return path;
  }
  json merge(const std::string& args, std::string* output = nullptr) {
    const std::string out = dir_.file("merged.json");
    const auto r = run_cli("merge -o " + shell_quoted(out) + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (output) *output = r.output;
    return json::parse(read_file(out));
  }

  TempDir dir_;
};

TEST_F(MergeAlignment, ClockSyncPutsRanksThatStartedApartOnTheWallClock) {
  // Rank 1 is another host: its monotonic clock is unrelated to rank 0's, and
  // its trace starts 2.5 ms later on the wall clock.
  SinkTrace r0;
  r0.spans = {{"train", 10.25, 100}};
  SinkTrace r1;
  r1.rank = 1;
  r1.pid = 777;
  r1.monotonic_base_ns = 987'654'321'000;
  r1.realtime_at_base_ns = kWall0 + 2'500'000;
  r1.spans = {{"train", 10.25, 100}};
  std::string printed;
  const json merged = merge(shell_quoted(write("b_rank1.json", sink_trace(r1))) + " " +
                                shell_quoted(write("a_rank0.json.gz", sink_trace(r0))),
                            &printed);
  EXPECT_NE(printed.find("wall clock"), std::string::npos) << printed;
  const auto pids = process_pids(merged);
  ASSERT_EQ(pids.count("rank 0 (pid 4242)"), 1u) << merged.dump(1);
  ASSERT_EQ(pids.count("rank 1 (pid 777)"), 1u);
  const auto a = named(merged, pids.at("rank 0 (pid 4242)"), "region::train");
  const auto b = named(merged, pids.at("rank 1 (pid 777)"), "region::train");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  // Sub-microsecond digits survive; rank 1 sits 2500 µs later.
  EXPECT_DOUBLE_EQ(a[0]["ts"].get<double>(), 10.25);
  EXPECT_DOUBLE_EQ(b[0]["ts"].get<double>(), 2510.25);
  EXPECT_EQ(merged["regiontrace_merge"]["clock"], "realtime");
  // ts 0 is rank 0's base on rank 0's monotonic clock.
  EXPECT_EQ(merged["baseTimeNanoseconds"], r0.monotonic_base_ns);
  EXPECT_DOUBLE_EQ(
      merged["regiontrace_merge"]["ranks"][1]["inputs"][0]["ts_offset_us"].get<double>(), 2500);
}

TEST_F(MergeAlignment, AlignOnMarkUndoesAClockOffsetAndReportsTheShift) {
  // Both ranks leave a barrier at the same true instants (ts 1000 and 5000 on
  // each), but rank 1's host clock runs 7 ms ahead (what
  // REGIONTRACE_TEST_CLOCK_SHIFT_NS simulates).
  SinkTrace r0;
  r0.spans = {{"step", 1000, 3000}};
  r0.marks = {1000, 5000};
  SinkTrace r1 = r0;
  r1.rank = 1;
  r1.pid = 778;
  r1.realtime_at_base_ns = kWall0 + 7'000'000;
  r1.marks = {1000, 5400};  // its second barrier left 400 µs later
  const std::string a = shell_quoted(write("r0.json", sink_trace(r0)));
  const std::string b = shell_quoted(write("r1.json", sink_trace(r1)));

  json merged = merge(a + " " + b);  // clockSync alone: 7 ms apart
  auto mark_ts = [&](const json& m, const std::string& process, std::size_t n) {
    return named(m, process_pids(m).at(process), "step_barrier").at(n)["ts"].get<double>();
  };
  EXPECT_DOUBLE_EQ(mark_ts(merged, "rank 1 (pid 778)", 0) - mark_ts(merged, "rank 0 (pid 4242)", 0),
                   7000);

  std::string printed;
  merged = merge("--align-on mark:step_barrier " + a + " " + b, &printed);
  EXPECT_DOUBLE_EQ(mark_ts(merged, "rank 1 (pid 778)", 0), mark_ts(merged, "rank 0 (pid 4242)", 0));
  EXPECT_NE(printed.find("rank 1: -7.000 ms"), std::string::npos) << printed;
  EXPECT_NE(printed.find("rank 0: +0.000 ms"), std::string::npos) << printed;
  const auto& ranks = merged["regiontrace_merge"]["ranks"];
  EXPECT_DOUBLE_EQ(ranks[1]["align_shift_us"].get<double>(), -7000);
  EXPECT_DOUBLE_EQ(ranks[0]["align_shift_us"].get<double>(), 0);
  EXPECT_EQ(merged["regiontrace_merge"]["align_on"]["mark"], "step_barrier");
  // The region keeps its place relative to its rank's mark.
  const auto span = named(merged, process_pids(merged).at("rank 1 (pid 778)"), "region::step");
  EXPECT_DOUBLE_EQ(span.at(0)["ts"].get<double>(), mark_ts(merged, "rank 1 (pid 778)", 0));

  // The second occurrence, spelled both ways: rank 1 moves 400 µs more.
  for (const std::string& option :
       {std::string("--align-on mark:step_barrier#2"),
        std::string("--align-on mark:step_barrier --align-occurrence 2")}) {
    merged = merge(option + " " + a + " " + b);
    EXPECT_DOUBLE_EQ(merged["regiontrace_merge"]["ranks"][1]["align_shift_us"].get<double>(), -7400)
        << option;
    EXPECT_DOUBLE_EQ(mark_ts(merged, "rank 1 (pid 778)", 1),
                     mark_ts(merged, "rank 0 (pid 4242)", 1));
  }

  // A mark that is not there, or not that often: exit 2, naming the file.
  const std::string out = shell_quoted(dir_.file("x.json"));
  auto r = run_cli("merge -o " + out + " --align-on mark:nowhere " + a + " " + b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no instant event (mark) named \"nowhere\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("r0.json"), std::string::npos) << r.output;
  r = run_cli("merge -o " + out + " --align-on mark:step_barrier#3 " + a + " " + b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("occurs 2 times"), std::string::npos) << r.output;
  r = run_cli("merge -o " + out + " --align-on barrier " + a + " " + b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("expected mark:NAME"), std::string::npos) << r.output;
  r = run_cli("merge -o " + out + " --align-on mark:step_barrier#0 " + a + " " + b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a positive integer"), std::string::npos) << r.output;
}

TEST_F(MergeAlignment, TracesOfOneRankShareItsProcessOnTracksOfTheirOwn) {
  // Rank 0's torch_profiler and timeline traces have the same region on the
  // same thread, 3 µs apart (each sink stamps it itself); its memory trace
  // has wall-clock ts. Rank 1 has a torch_profiler trace only.
  SinkTrace torch0;
  torch0.spans = {{"train", 100, 500}, {"fwd", 120, 200}};
  SinkTrace timeline0 = torch0;
  timeline0.sink = "timeline";
  timeline0.spans = {{"train", 103, 500}, {"fwd", 123, 200}};
  SinkTrace torch1 = torch0;
  torch1.rank = 1;
  torch1.pid = 5151;
  // The memory_snapshot sink's counter trace: realtime µs, spans of category region.
  const std::int64_t wall_us = kWall0 / 1000;
  json memory = {
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"producer", "regiontrace memory_snapshot"}, {"clock", "CLOCK_REALTIME"}, {"rank", 0}}},
      {"traceEvents",
       {{{"ph", "M"},
         {"name", "process_name"},
         {"pid", 4242},
         {"tid", 0},
         {"args", {{"name", "rank 0 memory"}}}},
        {{"ph", "X"},
         {"cat", "region"},
         {"name", "train"},
         {"pid", 4242},
         {"tid", 11},
         {"ts", wall_us + 100},
         {"dur", 500},
         {"args", {{"path", "train"}, {"held_bytes", 0}}}},
        {{"ph", "C"},
         {"name", "libtorch allocated bytes"},
         {"pid", 4242},
         {"tid", 0},
         {"ts", wall_us + 100},
         {"args", {{"cpu", 1024}}}}}}};
  const std::string inputs = shell_quoted(write("trace_rank0.json.gz", sink_trace(torch0))) + " " +
                             shell_quoted(write("timeline_rank0.json", sink_trace(timeline0))) +
                             " " + shell_quoted(write("memory_rank0.json", memory)) + " " +
                             shell_quoted(write("trace_rank1.json", sink_trace(torch1)));
  std::string printed;
  const json merged = merge(inputs, &printed);
  const auto pids = process_pids(merged);
  ASSERT_EQ(pids.size(), 2u) << printed;
  const int p0 = pids.at("rank 0 (pid 4242)");
  // One process, three tracks for thread 11: the torch spans keep tid 11.
  std::map<std::int64_t, std::string> thread_names;
  std::map<std::int64_t, std::vector<std::string>> spans_by_tid;
  for (const auto& e : merged["traceEvents"]) {
    if (e["pid"] != p0) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[e["tid"].get<std::int64_t>()] = e["args"]["name"].get<std::string>();
    }
    if (e["ph"] == "X") spans_by_tid[e["tid"].get<std::int64_t>()].push_back(e["name"]);
  }
  ASSERT_EQ(spans_by_tid.size(), 3u) << merged.dump(1);
  EXPECT_EQ(spans_by_tid[11], (std::vector<std::string>{"region::train", "region::fwd"}));
  EXPECT_EQ(thread_names[11], "main");
  const std::int64_t timeline_tid = 11 + 100'000'000LL;
  const std::int64_t memory_tid = 11 + 200'000'000LL;
  EXPECT_EQ(spans_by_tid[timeline_tid].size(), 2u);
  EXPECT_EQ(thread_names[timeline_tid], "main (timeline)");
  EXPECT_EQ(spans_by_tid[memory_tid], (std::vector<std::string>{"train"}));
  EXPECT_EQ(thread_names[memory_tid], "thread 11 (memory_snapshot)");
  // The memory trace's wall-clock ts land where the torch trace's do.
  for (const auto& e : named(merged, p0, "train")) {
    EXPECT_NEAR(e["ts"].get<double>(), 100, 1e-3) << e.dump();
  }
  expect_nested(merged);

  // Two traces of one rank from the same sink are a mistake, said so.
  const std::string out = shell_quoted(dir_.file("x.json"));
  const auto r = run_cli("merge -o " + out + " " + shell_quoted(dir_.file("trace_rank0.json.gz")) +
                         " " + shell_quoted(write("again_rank0.json", sink_trace(torch0))));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("both torch_profiler traces"), std::string::npos) << r.output;

  // Writing over an input would destroy it before it is read.
  const std::string in_place = dir_.file("trace_rank1.json");
  const auto same = run_cli("merge -o " + shell_quoted(in_place) + " " + shell_quoted(in_place));
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.output.find("is also an input"), std::string::npos) << same.output;
  EXPECT_EQ(json::parse(read_file(in_place))["regiontrace"]["rank"], 1);
}

TEST_F(MergeAlignment, InputsLargerThanTheReadersChunksStreamThrough) {
  // 40000 ops (several MiB) and one event of 3 MiB: events cross the 1 MiB
  // chunks the reader inflates at a time.
  SinkTrace t;
  t.spans = {{"train", 0, 1e6}};
  json trace = sink_trace(t);
  for (int i = 0; i < 40000; ++i) {
    trace["traceEvents"].push_back({{"ph", "X"},
                                    {"cat", "cpu_op"},
                                    {"name", "aten::op\"" + std::to_string(i % 7) + "\\"},
                                    {"pid", 4242},
                                    {"tid", 11},
                                    {"ts", 1 + i * 20},
                                    {"dur", 10},
                                    {"args", {{"Input Dims", {{i, 64}}}}}});
  }
  trace["traceEvents"].push_back({{"ph", "i"},
                                  {"name", "big"},
                                  {"pid", 4242},
                                  {"tid", 11},
                                  {"ts", 5},
                                  {"args", {{"blob", std::string(3 << 20, 'x')}}}});
  const json merged = merge(shell_quoted(write("big_rank0.json.gz", trace)));
  std::size_t ops = 0;
  std::set<std::string> names;
  for (const auto& e : merged["traceEvents"]) {
    if (e.value("cat", "") == "cpu_op") {
      ++ops;
      names.insert(e["name"].get<std::string>());
    }
    if (e.value("name", "") == "big") {
      EXPECT_EQ(e["args"]["blob"].get<std::string>().size(), std::size_t{3} << 20);
    }
  }
  EXPECT_EQ(ops, 40000u);
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(names.count("aten::op\"3\\"), 1u);
  expect_nested(merged);
}

TEST_F(MergeAlignment, MalformedInputNamesTheFileTheByteAndTheProblem) {
  const std::string out = shell_quoted(dir_.file("x.json"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"traceEvents\":[{\"ph\":\"X\"} {\"ph\":\"X\"}]}", "expected ',' or ']' between events"},
      {"[1, 2]", "event 0 is not an object"},
      {"{\"traceEvents\":[]} trailing", "text after the end of the trace"},
      {"{\"traceEvents\":{}}", "\"traceEvents\" is not an array"},
      {"{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}", "the trace was cut short"},
      {"{\"traceEvents\":[{\"ph\" \"X\"}]}", "event 0 is not well-formed JSON"},
      {"nonsense", "not a Chrome trace"}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string path = dir_.file("bad" + std::to_string(i) + ".json");
    write_file(path, cases[i].first);
    const auto r = run_cli("merge -o " + out + " " + shell_quoted(path));
    EXPECT_EQ(r.exit_code, 2) << cases[i].first;
    EXPECT_NE(r.output.find(path + ": "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(cases[i].second), std::string::npos) << cases[i].first << "\n"
                                                                 << r.output;
  }
}

}  // namespace
}  // namespace regiontrace::test
