#include "op_summary.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "torch_trace_writer.hpp"
#include "trace_file.hpp"

namespace regiontrace::torch_profiler {
namespace {

using nlohmann::json;

OpRecord op(const std::string& name, std::uint64_t tid, std::int64_t start_us, std::int64_t dur_us,
            std::vector<std::vector<std::int64_t>> shapes = {}, std::uint64_t flops = 0) {
  OpRecord r;
  r.name = name;
  r.thread = tid;
  r.start_ns = start_us * 1000;
  r.duration_ns = dur_us * 1000;
  r.has_shapes = !shapes.empty();
  r.shapes = std::move(shapes);
  r.flops = flops;
  return r;
}

const OpStats* row(const std::vector<OpStats>& rows, const std::string& name,
                   const std::string& shapes = "") {
  for (const OpStats& r : rows) {
    if (r.name == name && (shapes.empty() || r.input_shapes == shapes)) return &r;
  }
  return nullptr;
}

TraceData nested() {
  TraceData d;
  // Thread 1: linear [0,100] calls mm [10,40] (which calls empty [15,25]) and add [50,60].
  d.ops = {op("aten::linear", 1, 0, 100), op("aten::mm", 1, 10, 30, {{4, 8}, {8, 2}}, 128),
           op("aten::empty", 1, 15, 10), op("aten::add", 1, 50, 10),
           // Thread 2 runs at the same time: its ops are not children of thread 1's.
           op("aten::mm", 2, 20, 50, {{2, 2}, {2, 2}}, 16)};
  OpRecord mem;
  mem.kind = OpRecord::Kind::kMemory;
  mem.name = "[memory]";
  mem.thread = 1;
  mem.start_ns = 16000;
  mem.bytes = 64;
  d.ops.push_back(mem);
  return d;
}

TEST(OpSummary, SelfTimeSubtractsDirectChildrenOnTheSameThread) {
  const OpSummary s = summarize(nested());
  ASSERT_NE(row(s.by_op, "aten::linear"), nullptr);
  EXPECT_EQ(row(s.by_op, "aten::linear")->self_ns, 60000);
  EXPECT_EQ(row(s.by_op, "aten::linear")->total_ns, 100000);
  EXPECT_EQ(row(s.by_op, "aten::mm")->self_ns, 20000 + 50000);
  EXPECT_EQ(row(s.by_op, "aten::mm")->total_ns, 30000 + 50000);
  EXPECT_EQ(row(s.by_op, "aten::mm")->calls, 2);
  EXPECT_EQ(row(s.by_op, "aten::mm")->flops, 144u);
  EXPECT_EQ(row(s.by_op, "aten::empty")->self_ns, 10000);
  EXPECT_EQ(row(s.by_op, "aten::add")->self_ns, 10000);
  EXPECT_EQ(s.op_calls, 5);  // the allocation is not an op
  EXPECT_EQ(s.self_ns, 60000 + 70000 + 10000 + 10000);
}

TEST(OpSummary, SortedBySelfTime) {
  const OpSummary s = summarize(nested());
  ASSERT_EQ(s.by_op.size(), 4u);
  EXPECT_EQ(s.by_op[0].name, "aten::mm");
  EXPECT_EQ(s.by_op[1].name, "aten::linear");
  for (std::size_t i = 1; i < s.by_op.size(); ++i) {
    EXPECT_GE(s.by_op[i - 1].self_ns, s.by_op[i].self_ns);
  }
}

TEST(OpSummary, PerShapeRowsOnlyWithRecordShapes) {
  TraceData d = nested();
  EXPECT_TRUE(summarize(d).by_shape.empty());
  d.record_shapes = true;
  const OpSummary s = summarize(d);
  ASSERT_NE(row(s.by_shape, "aten::mm", "[[4, 8], [8, 2]]"), nullptr);
  EXPECT_EQ(row(s.by_shape, "aten::mm", "[[4, 8], [8, 2]]")->calls, 1);
  EXPECT_EQ(row(s.by_shape, "aten::mm", "[[2, 2], [2, 2]]")->self_ns, 50000);
}

TEST(OpSummary, TextAndJsonAgree) {
  TraceData d = nested();
  d.record_shapes = true;
  d.rank = 2;
  d.region_names = {"step"};
  RegionSpan span;
  span.region = 0;
  span.start_ns = 0;
  span.end_ns = 200000;
  d.spans = {span, span};
  const OpSummary s = summarize(d);
  const std::string text = summary_text(s, d, "t.json.gz");
  EXPECT_NE(text.find("rank 2"), std::string::npos);
  EXPECT_NE(text.find("t.json.gz"), std::string::npos);
  EXPECT_LT(text.find("aten::mm"), text.find("aten::linear"));
  EXPECT_NE(text.find("[[4, 8], [8, 2]]"), std::string::npos);
  // The regions table has its column names, as every other table does.
  const auto regions = text.find("\nRegions\n");
  ASSERT_NE(regions, std::string::npos) << text;
  const auto header = text.find('\n', regions + 1) + 1;
  const std::string header_line = text.substr(header, text.find('\n', header) - header);
  EXPECT_EQ(header_line.rfind("Name", 0), 0u) << text;
  EXPECT_NE(header_line.find("Count"), std::string::npos) << text;
  EXPECT_NE(header_line.find("Total"), std::string::npos) << text;
  const json j = json::parse(summary_json(s, d, "t.json.gz"));
  EXPECT_EQ(j["rank"], 2);
  EXPECT_EQ(j["op_calls"], 5);
  EXPECT_EQ(j["ops"][0]["name"], "aten::mm");
  EXPECT_DOUBLE_EQ(j["ops"][0]["self_us"].get<double>(), 70.0);
  EXPECT_EQ(j["by_input_shapes"].size(), 5u);
  ASSERT_EQ(j["regions"].size(), 1u);
  EXPECT_EQ(j["regions"][0]["count"], 2);
  // The second span nests in the first and ends 1 ns before it, as written.
  EXPECT_DOUBLE_EQ(j["regions"][0]["total_us"].get<double>(), 399.999);
}

TEST(OpSummary, LongTablesAreShortenedInTextOnly) {
  TraceData d;
  for (int i = 0; i < 10; ++i) d.ops.push_back(op("op" + std::to_string(i), 1, i * 10, 5));
  const OpSummary s = summarize(d);
  const std::string text = summary_text(s, d, "t", 3);
  EXPECT_NE(text.find("7 more rows"), std::string::npos);
  EXPECT_EQ(json::parse(summary_json(s, d, "t"))["ops"].size(), 10u);
}

// What libtorch 1.13's whole-microsecond stamps do to nesting: a child that
// ends 1 us after its parent, and an op whose recorded start lies 0.09 us
// before the region it ran in. The sink's .summary.json and `regiontrace
// summary` on the trace the sink wrote must give every op the same self time.
TEST(OpSummary, SinkSummaryAndCliSummaryAgreeOnTheSameTrace) {
  const std::string cli = regiontrace::test::binary_dir() + "/bin/regiontrace";
  if (!std::filesystem::exists(cli)) GTEST_SKIP() << "the regiontrace CLI is not built";
  TraceData d;
  d.region_names = {"", "training_step"};
  RegionSpan region;
  region.region = 1;
  region.thread = 1;
  region.start_ns = 1000090;  // randn below is stamped 0.09 us before this
  region.end_ns = 1200000;
  d.spans.push_back(region);
  d.ops = {op("aten::randn", 1, 1000, 20), op("aten::normal_", 1, 1002, 10),
           // linear [1030, 1130]; mm stamped to end 1 us after linear does.
           op("aten::linear", 1, 1030, 100), op("aten::mm", 1, 1040, 91),
           op("aten::empty", 1, 1050, 5), op("aten::add", 1, 1140, 10),
           op("aten::mm", 2, 1040, 30)};
  regiontrace::test::TempDir dir;
  const std::string path = dir.file("trace.json");
  {
    TraceFile out(path, false);
    write_chrome_trace(d, TraceLimits{}, out);
    out.commit();
  }
  const json sink = json::parse(summary_json(summarize(d), d, "trace.json"));
  const auto r = regiontrace::test::run_command(cli + " summary --json --top 0 " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json tool = json::parse(r.output);
  std::map<std::string, json> by_name;
  for (const json& row : tool.at("ops")) by_name[row.at("name").get<std::string>()] = row;
  ASSERT_EQ(by_name.size(), sink.at("ops").size()) << r.output;
  for (const json& row : sink.at("ops")) {
    const std::string name = row.at("name").get<std::string>();
    ASSERT_EQ(by_name.count(name), 1u) << name;
    EXPECT_EQ(by_name[name].at("calls"), row.at("calls")) << name;
    EXPECT_EQ(by_name[name].at("self_us"), row.at("self_us")) << name << ": " << r.output;
    EXPECT_EQ(by_name[name].at("total_us"), row.at("total_us")) << name;
  }
  // The rule itself: mm is clamped into linear (90 us, not 91, of linear's
  // 100 are its children's; less 1 ns, as it ends 1 ns before linear in the
  // written trace), randn nests in the region, not the region in it.
  const OpSummary s = summarize(d);
  EXPECT_EQ(row(s.by_op, "aten::linear")->self_ns, 10000 + 1);
  EXPECT_EQ(row(s.by_op, "aten::mm")->self_ns, (90 - 5 + 30) * 1000 - 1);
  EXPECT_EQ(row(s.by_op, "aten::randn")->self_ns, 10000 - 90);
  // Totals are the clamped durations too, the ones the trace shows.
  EXPECT_EQ(row(s.by_op, "aten::mm")->total_ns, (90 + 30) * 1000 - 1);
  EXPECT_EQ(row(s.by_op, "aten::randn")->total_ns, 20000 - 90);
  ASSERT_EQ(tool.at("regions").size(), 1u);
  // 199.91 us, less randn (19.91 once clamped), linear and add.
  EXPECT_DOUBLE_EQ(tool["regions"][0].at("self_us").get<double>(), 70.0);
}

// Kineto's device activity, each with its own category: only kernels, copies
// and fills are device work. An annotation spanning kernels, or a wait,
// added to them would count the same GPU time twice.
TEST(OpSummary, DeviceTimeCountsKernelsCopiesAndFillsOnly) {
  TraceData d;
  auto device = [&](const char* category, const char* name, std::int64_t start_us,
                    std::int64_t dur_us) {
    OpRecord r = op(name, device_track(0, 7), start_us, dur_us);
    r.kind = OpRecord::Kind::kDevice;
    r.category = category;
    r.device_type = 1;
    r.device_index = 0;
    r.stream = 7;
    d.ops.push_back(r);
  };
  device("gpu_user_annotation", "fastvideo.region::denoise", 0, 100);
  device("kernel", "sgemm", 10, 30);
  device("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 50, 5);
  device("gpu_memset", "Memset (Device)", 60, 2);
  device("cuda_sync", "Stream Sync", 70, 20);
  OpRecord launch = op("cudaLaunchKernel", 1, 9, 1);
  launch.category = "cuda_runtime";
  d.ops.push_back(launch);
  const OpSummary s = summarize(d);
  ASSERT_EQ(s.device.size(), 3u);
  EXPECT_EQ(row(s.device, "sgemm")->total_ns, 30000);
  EXPECT_NE(row(s.device, "Memcpy HtoD (Pageable -> Device)"), nullptr);
  EXPECT_NE(row(s.device, "Memset (Device)"), nullptr);
  EXPECT_EQ(row(s.device, "fastvideo.region::denoise"), nullptr);
  EXPECT_EQ(row(s.device, "Stream Sync"), nullptr);
  // The runtime call is host work, listed with the ops.
  EXPECT_NE(row(s.by_op, "cudaLaunchKernel"), nullptr);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
