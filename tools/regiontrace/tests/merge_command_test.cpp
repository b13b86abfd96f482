// `regiontrace merge`: per-rank Chrome traces written here are merged, and
// the merged file is parsed back: process tracks, pids, event counts, flows,
// timestamps, metadata, gzip in and out.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <map>
#include <optional>
#include <set>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

struct RankTraceSpec {
  int pid = 4242;           // the same on every rank by default: merge must separate them
  std::optional<int> rank;  // distributedInfo.rank, as Kineto writes it
  std::optional<int> regiontrace_rank;  // regiontrace.rank, as the torch_profiler sink does
  int ops = 3;
  double t0 = 1000;
  std::optional<std::int64_t> base_ns;
  std::string trace_name = "trace";
};

// A trace like the torch_profiler sink's: names, a region span with ops, a
// flow between two ops, a collection marker.
json rank_trace(const RankTraceSpec& spec) {
  json events = json::array();
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", spec.pid},
                    {"tid", 0},
                    {"args", {{"name", "python"}}}});
  events.push_back({{"ph", "M"},
                    {"name", "process_sort_index"},
                    {"pid", spec.pid},
                    {"tid", 0},
                    {"args", {{"sort_index", 5}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", spec.pid},
                    {"tid", 11},
                    {"args", {{"name", "main"}}}});
  events.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", spec.pid},
                    {"tid", 12},
                    {"args", {{"name", "worker"}}}});
  events.push_back({{"ph", "i"},
                    {"name", "regiontrace.profiler.enable_collection"},
                    {"s", "g"},
                    {"pid", spec.pid},
                    {"tid", 11},
                    {"ts", spec.t0}});
  events.push_back({{"ph", "X"},
                    {"name", "regiontrace.region::denoise"},
                    {"cat", "user_annotation"},
                    {"pid", spec.pid},
                    {"tid", 11},
                    {"ts", spec.t0},
                    {"dur", 100 * spec.ops + 10}});
  for (int i = 0; i < spec.ops; ++i) {
    events.push_back({{"ph", "X"},
                      {"name", "aten::mm"},
                      {"cat", "cpu_op"},
                      {"pid", spec.pid},
                      {"tid", 11},
                      {"ts", spec.t0 + 5 + 100 * i},
                      {"dur", 90},
                      {"args", {{"Input Dims", json::array({json::array({64, 64})})}}}});
  }
  events.push_back({{"ph", "s"},
                    {"id", 1},
                    {"name", "fwdbwd"},
                    {"cat", "fwdbwd"},
                    {"pid", spec.pid},
                    {"tid", 11},
                    {"ts", spec.t0 + 5}});
  events.push_back({{"ph", "f"},
                    {"id", 1},
                    {"bp", "e"},
                    {"name", "fwdbwd"},
                    {"cat", "fwdbwd"},
                    {"pid", spec.pid},
                    {"tid", 12},
                    {"ts", spec.t0 + 50}});
  json trace = {{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"schemaVersion", 1},
                {"traceName", spec.trace_name}};
  if (spec.rank) trace["distributedInfo"] = {{"backend", "gloo"}, {"rank", *spec.rank}};
  if (spec.regiontrace_rank) {
    trace["regiontrace"] = {{"rank", *spec.regiontrace_rank}, {"world_size", 2}};
  }
  if (spec.base_ns) trace["baseTimeNanoseconds"] = *spec.base_ns;
  return trace;
}

bool is_meta(const json& e) {
  return e.value("ph", "") == "M";
}

// Process name -> pid, from the merged trace. Names are "rank R (pid P)"
// ("rank R (pid P): <original name>" for ranks with several processes);
// with `strip_pid` the " (pid P)" part is left out of the keys.
std::map<std::string, int> process_pids(const json& merged, bool strip_pid = true) {
  std::map<std::string, int> pids;
  for (const auto& e : merged["traceEvents"]) {
    if (is_meta(e) && e["name"] == "process_name") {
      std::string name = e["args"]["name"].get<std::string>();
      const auto open = name.find(" (pid ");
      if (strip_pid && open != std::string::npos) name.erase(open, name.find(')', open) - open + 1);
      EXPECT_EQ(pids.count(name), 0u) << "two tracks named " << name;
      pids[name] = e["pid"].get<int>();
    }
  }
  return pids;
}

std::vector<json> events_of(const json& merged, int pid, bool meta = false) {
  std::vector<json> out;
  for (const auto& e : merged["traceEvents"]) {
    if (e["pid"] == pid && is_meta(e) == meta) out.push_back(e);
  }
  return out;
}

class MergeCommand : public ::testing::Test {
 protected:
  std::string write_trace(const std::string& name, const json& trace) {
    const std::string path = dir_.file(name);
    if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") {
      write_gzip(path, trace.dump());
    } else {
      write_file(path, trace.dump(1));
    }
    return path;
  }

  TempDir dir_;
};

TEST_F(MergeCommand, EachRankBecomesItsOwnProcessTrack) {
  RankTraceSpec r0;
  r0.rank = 0;
  r0.ops = 5;
  r0.trace_name = "first";
  RankTraceSpec r1;
  r1.rank = 1;
  r1.ops = 3;
  r1.trace_name = "second";
  const auto a = write_trace("a.json", rank_trace(r0));
  const auto b = write_trace("b.json.gz", rank_trace(r1));
  const auto out = dir_.file("merged.json.gz");
  // Inputs in reverse rank order: the tracks still come out by rank.
  const auto r =
      run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(b) + " " + shell_quoted(a));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("merged 2 ranks"), std::string::npos) << r.output;

  const std::string raw = read_file(out);
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);  // gzip, as the name says
  EXPECT_EQ(static_cast<unsigned char>(raw[1]), 0x8b);
  const json merged = json::parse(read_gzip(out));

  const auto pids = process_pids(merged);
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_EQ(process_pids(merged, false).count("rank 0 (pid 4242)"), 1u);
  ASSERT_EQ(pids.count("rank 0"), 1u);
  ASSERT_EQ(pids.count("rank 1"), 1u);
  const int pid0 = pids.at("rank 0");
  const int pid1 = pids.at("rank 1");
  EXPECT_NE(pid0, pid1);
  EXPECT_NE(pid0, 4242);

  // Every non-metadata event kept, on its rank's track: marker, region, ops, 2 flow ends.
  const auto e0 = events_of(merged, pid0);
  const auto e1 = events_of(merged, pid1);
  EXPECT_EQ(e0.size(), 1u + 1u + 5u + 2u);
  EXPECT_EQ(e1.size(), 1u + 1u + 3u + 2u);
  std::size_t total_non_meta = 0;
  for (const auto& e : merged["traceEvents"]) total_non_meta += is_meta(e) ? 0 : 1;
  EXPECT_EQ(total_non_meta, e0.size() + e1.size());
  // Args survive the rewrite.
  for (const auto& e : e0) {
    if (e["name"] == "aten::mm") {
      EXPECT_EQ(e["args"]["Input Dims"], json::parse("[[64,64]]"));
    }
  }

  // Thread names kept per rank; the process sort index replaced by rank order.
  for (int pid : {pid0, pid1}) {
    std::set<std::string> threads;
    std::optional<int> sort_index;
    for (const auto& e : events_of(merged, pid, true)) {
      if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
      if (e["name"] == "process_sort_index") {
        EXPECT_FALSE(sort_index.has_value()) << "two sort indices for pid " << pid;
        sort_index = e["args"]["sort_index"].get<int>();
      }
      if (e["name"] == "process_labels") {
        EXPECT_EQ(e["args"]["labels"], "python");
      }
    }
    EXPECT_EQ(threads, (std::set<std::string>{"main", "worker"}));
    ASSERT_TRUE(sort_index.has_value());
  }

  // Flows stay within their rank; global instants become process-scoped.
  auto flow_id = [](const std::vector<json>& events, const char* ph) {
    for (const auto& e : events) {
      if (e["ph"] == ph) return e["id"];
    }
    return json();
  };
  EXPECT_EQ(flow_id(e0, "s"), flow_id(e0, "f"));
  EXPECT_EQ(flow_id(e1, "s"), flow_id(e1, "f"));
  EXPECT_NE(flow_id(e0, "s"), flow_id(e1, "s"));
  for (const auto& e : e0) {
    if (e["ph"] == "i") {
      EXPECT_EQ(e["s"], "p");
    }
  }

  // Metadata: shared keys at the top, the rest per rank.
  EXPECT_EQ(merged["displayTimeUnit"], "ms");
  EXPECT_EQ(merged["schemaVersion"], 1);
  EXPECT_FALSE(merged.contains("traceName"));
  const auto& ranks = merged["regiontrace_merge"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0]["rank"], 0);
  EXPECT_EQ(ranks[0]["inputs"][0]["source"], a);
  EXPECT_EQ(ranks[0]["rank_from"], "distributedInfo");
  EXPECT_EQ(ranks[0]["inputs"][0]["metadata"]["traceName"], "first");
  EXPECT_EQ(ranks[1]["inputs"][0]["metadata"]["traceName"], "second");
  EXPECT_EQ(ranks[1]["inputs"][0]["metadata"]["distributedInfo"]["rank"], 1);
  EXPECT_EQ(ranks[1]["processes"][0]["original_pid"], 4242);
  EXPECT_EQ(ranks[1]["processes"][0]["pid"], pid1);
}

TEST_F(MergeCommand, RanksFromFileNamesAndPlainJsonOutput) {
  RankTraceSpec r0;
  r0.ops = 2;
  RankTraceSpec r1;
  r1.ops = 4;
  const auto a = write_trace("trace_rank1.json", rank_trace(r1));
  const auto b = write_trace("trace_rank0.json.gz", rank_trace(r0));
  const auto out = dir_.file("merged.json");
  ASSERT_EQ(
      run_cli("merge " + shell_quoted(a) + " " + shell_quoted(b) + " --output " + shell_quoted(out))
          .exit_code,
      0);
  const json merged = json::parse(read_file(out));  // plain JSON: no .gz suffix
  const auto pids = process_pids(merged);
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_EQ(events_of(merged, pids.at("rank 0")).size(), 1u + 1u + 2u + 2u);
  EXPECT_EQ(events_of(merged, pids.at("rank 1")).size(), 1u + 1u + 4u + 2u);
  EXPECT_EQ(merged["regiontrace_merge"]["ranks"][0]["rank_from"], "file name");
}

// `-o -` and `-o /dev/stdout` write the merged trace to standard output
// (what merge says goes to standard error then), and /dev/stdout stays the
// link it was: the output is written in place, not renamed over it. A pipe
// behind a path (a FIFO) is written the same way.
TEST_F(MergeCommand, StandardOutputAndStreamsAreWrittenInPlace) {
  RankTraceSpec r0;
  RankTraceSpec r1;
  r1.ops = 4;
  const auto a = write_trace("trace_rank0.json", rank_trace(r0));
  const auto b = write_trace("trace_rank1.json", rank_trace(r1));
  const std::string inputs = shell_quoted(a) + " " + shell_quoted(b);
  struct stat before {};
  ASSERT_EQ(::lstat("/dev/stdout", &before), 0);
  for (const std::string output : {"-", "/dev/stdout"}) {
    const CommandResult r = run_cli_stdout("merge " + inputs + " -o " + output);
    ASSERT_EQ(r.exit_code, 0) << output << "\n" << r.output;
    const json merged = json::parse(r.output);  // the trace alone: the summary went to stderr
    const auto pids = process_pids(merged);
    ASSERT_EQ(pids.size(), 2u) << output;
    EXPECT_EQ(events_of(merged, pids.at("rank 1")).size(), 1u + 1u + 4u + 2u) << output;
  }
  struct stat after {};
  ASSERT_EQ(::lstat("/dev/stdout", &after), 0);
  EXPECT_TRUE(S_ISLNK(after.st_mode)) << "/dev/stdout was replaced";
  EXPECT_EQ(before.st_ino, after.st_ino);

  const std::string fifo = dir_.file("merged.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CommandResult piped = run_command("( cat " + shell_quoted(fifo) + " > " +
                                          shell_quoted(dir_.file("from_fifo.json")) + " & " +
                                          shell_quoted(REGIONTRACE_CLI) + " merge " + inputs +
                                          " -o " + shell_quoted(fifo) + "; wait )");
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(process_pids(json::parse(read_file(dir_.file("from_fifo.json")))).size(), 2u);
  // Compressing into a stream is refused, before anything waits on it.
  const std::string gz_fifo = dir_.file("merged.json.gz");
  ASSERT_EQ(::mkfifo(gz_fifo.c_str(), 0600), 0);
  const CommandResult gz = run_cli("merge " + inputs + " -o " + shell_quoted(gz_fifo));
  EXPECT_EQ(gz.exit_code, 2) << gz.output;
  EXPECT_NE(gz.output.find("is not a regular file, and a .gz output is written to a file"),
            std::string::npos)
      << gz.output;
}

TEST_F(MergeCommand, RankFromTheTorchProfilerSinksMetadata) {
  RankTraceSpec r0;
  r0.regiontrace_rank = 1;
  r0.ops = 1;
  RankTraceSpec r1;
  r1.regiontrace_rank = 0;
  r1.ops = 2;
  // The file names say otherwise: what the trace states wins.
  const auto a = write_trace("x_rank0.json", rank_trace(r0));
  const auto b = write_trace("x_rank1.json", rank_trace(r1));
  const auto out = dir_.file("merged.json");
  ASSERT_EQ(run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(a) + " " + shell_quoted(b))
                .exit_code,
            0);
  const json merged = json::parse(read_file(out));
  const auto pids = process_pids(merged);
  EXPECT_EQ(events_of(merged, pids.at("rank 1")).size(), 1u + 1u + 1u + 2u);
  EXPECT_EQ(events_of(merged, pids.at("rank 0")).size(), 1u + 1u + 2u + 2u);
  EXPECT_EQ(merged["regiontrace_merge"]["ranks"][0]["rank_from"], "regiontrace");
  EXPECT_EQ(merged["regiontrace_merge"]["ranks"][0]["inputs"][0]["metadata"]["regiontrace"]["rank"],
            0);
}

TEST_F(MergeCommand, DuplicateRanksAskForExplicitRanks) {
  RankTraceSpec spec;
  spec.rank = 0;
  const auto a = write_trace("a.json", rank_trace(spec));
  const auto b = write_trace("b.json", rank_trace(spec));
  const auto out = dir_.file("merged.json");
  const auto r =
      run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(a) + " " + shell_quoted(b));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("rank 0 twice"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--ranks"), std::string::npos) << r.output;

  ASSERT_EQ(run_cli("merge -o " + shell_quoted(out) + " --ranks 3,5 " + shell_quoted(a) + " " +
                    shell_quoted(b))
                .exit_code,
            0);
  const auto pids = process_pids(json::parse(read_file(out)));
  EXPECT_EQ(pids.count("rank 3"), 1u);
  EXPECT_EQ(pids.count("rank 5"), 1u);
  EXPECT_EQ(run_cli("merge -o " + shell_quoted(out) + " --ranks 1 " + shell_quoted(a) + " " +
                    shell_quoted(b))
                .exit_code,
            2);
}

TEST_F(MergeCommand, TimestampsShareOneBase) {
  RankTraceSpec r0;
  r0.rank = 0;
  r0.t0 = 10;
  r0.base_ns = 1'700'000'000'000'000'000;
  RankTraceSpec r1 = r0;
  r1.rank = 1;
  r1.base_ns = *r0.base_ns + 500'000;  // started 500 us later
  const auto a = write_trace("a.json", rank_trace(r0));
  const auto b = write_trace("b.json", rank_trace(r1));
  const auto out = dir_.file("merged.json");
  ASSERT_EQ(run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(a) + " " + shell_quoted(b))
                .exit_code,
            0);
  json merged = json::parse(read_file(out));
  EXPECT_EQ(merged["baseTimeNanoseconds"], *r0.base_ns);
  auto region_ts = [&](const std::string& rank) {
    for (const auto& e : events_of(merged, process_pids(merged).at(rank))) {
      if (e["ph"] == "X" && e["name"] == "regiontrace.region::denoise") {
        return e["ts"].get<double>();
      }
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(region_ts("rank 0"), 10);
  EXPECT_DOUBLE_EQ(region_ts("rank 1"), 510);

  // Without a base, --align-starts lines up the first events of each rank.
  RankTraceSpec early;
  early.rank = 0;
  early.t0 = 1000;
  RankTraceSpec late = early;
  late.rank = 1;
  late.t0 = 250000;
  const auto c = write_trace("c.json", rank_trace(early));
  const auto d = write_trace("d.json", rank_trace(late));
  ASSERT_EQ(run_cli("merge --align-starts -o " + shell_quoted(out) + " " + shell_quoted(c) + " " +
                    shell_quoted(d))
                .exit_code,
            0);
  merged = json::parse(read_file(out));
  EXPECT_DOUBLE_EQ(region_ts("rank 0"), 1000);
  EXPECT_DOUBLE_EQ(region_ts("rank 1"), 1000);
}

TEST_F(MergeCommand, SeveralProcessesOfOneRankKeepTheirNames) {
  for (int rank : {0, 1}) {
    RankTraceSpec spec;
    spec.pid = 100 + rank;
    spec.rank = rank;
    json trace = rank_trace(spec);
    // A GPU process as Kineto writes it: its own pid and name.
    trace["traceEvents"].push_back({{"ph", "M"},
                                    {"name", "process_name"},
                                    {"pid", 0},
                                    {"tid", 0},
                                    {"args", {{"name", "GPU 0"}}}});
    trace["traceEvents"].push_back({{"ph", "X"},
                                    {"name", "gemm"},
                                    {"cat", "kernel"},
                                    {"pid", 0},
                                    {"tid", 7},
                                    {"ts", 1010},
                                    {"dur", 20}});
    write_trace("r" + std::to_string(rank) + ".json", trace);
  }
  const auto out = dir_.file("merged.json");
  ASSERT_EQ(run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(dir_.file("r0.json")) +
                    " " + shell_quoted(dir_.file("r1.json")))
                .exit_code,
            0);
  const json merged = json::parse(read_file(out));
  const auto pids = process_pids(merged);
  ASSERT_EQ(pids.size(), 4u);
  for (const char* name : {"rank 0: python", "rank 0: GPU 0", "rank 1: python", "rank 1: GPU 0"}) {
    ASSERT_EQ(pids.count(name), 1u) << name;
  }
  const auto gpu0 = events_of(merged, pids.at("rank 0: GPU 0"));
  ASSERT_EQ(gpu0.size(), 1u);
  EXPECT_EQ(gpu0[0]["name"], "gemm");
  EXPECT_EQ(gpu0[0]["tid"], 7);
}

TEST_F(MergeCommand, BadInputExitsTwo) {
  const auto out = dir_.file("merged.json");
  const auto broken = dir_.file("broken.json");
  write_file(broken, "{\"traceEvents\": [");
  auto r = run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(broken));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("broken.json"), std::string::npos) << r.output;
  const auto no_events = dir_.file("no_events.json");
  write_file(no_events, "{\"events\": []}");
  r = run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(no_events));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("traceEvents"), std::string::npos) << r.output;
  const auto gz = dir_.file("truncated.json.gz");
  write_gzip(gz, rank_trace({}).dump());
  std::string bytes = read_file(gz);
  write_file(gz, bytes.substr(0, bytes.size() / 2));
  r = run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(gz));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("gzip"), std::string::npos) << r.output;
  EXPECT_EQ(run_cli("merge " + shell_quoted(broken)).exit_code, 2);  // no -o
}

}  // namespace
}  // namespace regiontrace::test
