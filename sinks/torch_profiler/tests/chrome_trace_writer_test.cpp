#include "op_summary.hpp"
#include "torch_trace_writer.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "regiontrace/sdk/span_nesting.hpp"
#include "test_support.hpp"
#include "trace_nesting_check.hpp"

namespace regiontrace::torch_profiler {
namespace {

using nlohmann::json;
using regiontrace::test::TempDir;

constexpr std::int64_t kBase = 1700000000000000000;  // epoch ns

TraceData sample() {
  TraceData d;
  d.rank = 3;
  d.world_size = 4;
  d.pid = 77;
  d.prefix = "fastvideo";
  d.region_names = {"", "denoise"};
  d.threads = {{11, "main (11)"}};
  OpRecord mm;
  mm.name = "aten::mm";
  mm.thread = 11;
  mm.start_ns = kBase + 2'000'500;
  mm.duration_ns = 1'250;
  mm.has_shapes = true;
  mm.shapes = {{2, 3}, {3, 4}, {}};
  mm.dtypes = {"float", "float", "Scalar"};
  mm.flops = 48;
  d.ops.push_back(mm);
  OpRecord alloc;
  alloc.kind = OpRecord::Kind::kMemory;
  alloc.name = "[memory]";
  alloc.thread = 11;
  alloc.start_ns = kBase + 2'001'000;
  alloc.bytes = 512;
  d.ops.push_back(alloc);
  RegionSpan span;
  span.region = 1;
  span.thread = 11;
  span.start_ns = kBase + 1'000'000;
  span.end_ns = kBase + 5'000'000;
  span.path = "pipeline/denoise";
  span.depth = 1;
  span.step = 4;
  span.has_step = true;
  d.spans.push_back(span);
  d.markers.push_back({true, 11, kBase + 1'000'000, "region"});
  d.markers.push_back({false, 11, kBase + 5'000'000, "region"});
  return d;
}

json write(const TraceData& d, const TraceLimits& limits, const TempDir& dir,
           TraceWriteStats* stats = nullptr) {
  const std::string path = dir.file("t.json");
  TraceFile out(path, false);
  const TraceWriteStats s = write_chrome_trace(d, limits, out);
  out.commit();
  if (stats != nullptr) *stats = s;
  return json::parse(read_maybe_gzip(path));
}

const json* find(const json& t, const std::string& name) {
  for (const json& e : t["traceEvents"]) {
    if (e["name"] == name) return &e;
  }
  return nullptr;
}

TEST(ChromeTraceWriter, WritesSpansMarkersOpsAndNames) {
  TempDir dir;
  TraceData d = sample();
  d.record_shapes = d.with_flops = d.profile_memory = true;
  const json t = write(d, {}, dir);
  EXPECT_EQ(t["baseTimeNanoseconds"], kBase + 1'000'000);  // the earliest event
  const json* span = find(t, "fastvideo.region::denoise");
  ASSERT_NE(span, nullptr);
  EXPECT_EQ((*span)["ph"], "X");
  EXPECT_EQ((*span)["ts"], 0);
  EXPECT_EQ((*span)["dur"], 4000);
  EXPECT_EQ((*span)["pid"], 77);
  EXPECT_EQ((*span)["tid"], 11);
  EXPECT_EQ((*span)["args"]["path"], "pipeline/denoise");
  EXPECT_EQ((*span)["args"]["step"], 4);
  const json* on = find(t, "fastvideo.profiler.enable_collection");
  ASSERT_NE(on, nullptr);
  EXPECT_EQ((*on)["ph"], "i");
  EXPECT_EQ((*on)["s"], "t");
  ASSERT_NE(find(t, "fastvideo.profiler.disable_collection"), nullptr);
  const json* mm = find(t, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_DOUBLE_EQ((*mm)["ts"].get<double>(), 1000.5);  // microseconds, nanosecond digits kept
  EXPECT_DOUBLE_EQ((*mm)["dur"].get<double>(), 1.25);
  EXPECT_EQ((*mm)["args"]["Input Dims"], json::parse("[[2,3],[3,4],[]]"));
  EXPECT_EQ((*mm)["args"]["Input type"], json::parse(R"(["float","float","Scalar"])"));
  EXPECT_EQ((*mm)["args"]["flops"], 48);
  EXPECT_EQ((*mm)["args"]["Memory Delta (bytes)"], 512);
  const json* mem = find(t, "[memory]");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ((*mem)["args"]["Bytes"], 512);
  const json* thread = nullptr;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") thread = &e;
  }
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ((*thread)["args"]["name"], "main (11)");
  EXPECT_EQ(t["regiontrace"]["rank"], 3);
  EXPECT_EQ(t["regiontrace"]["world_size"], 4);
  EXPECT_EQ(t["regiontrace"]["events"], 5);
}

TEST(ChromeTraceWriter, KnobsOffLeaveTheirArgsOut) {
  TempDir dir;
  const json t = write(sample(), {}, dir);
  const json* mm = find(t, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_FALSE((*mm)["args"].contains("Input Dims"));
  EXPECT_FALSE((*mm)["args"].contains("flops"));
  EXPECT_FALSE((*mm)["args"].contains("Memory Delta (bytes)"));
}

TEST(ChromeTraceWriter, EventsComeInTimeOrderSpansFirst) {
  TempDir dir;
  const json t = write(sample(), {}, dir);
  double last = -1;
  std::vector<std::string> order;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M") continue;
    EXPECT_GE(e["ts"].get<double>(), last);
    last = e["ts"].get<double>();
    order.push_back(e["name"]);
  }
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0], "fastvideo.region::denoise");  // same ts as the marker: the span first
}

TEST(ChromeTraceWriter, MaxEventsKeepsTheEarliestAndSaysWhatWasCut) {
  TempDir dir;
  TraceData d = sample();
  d.ops_refused = 9;
  TraceWriteStats stats;
  const json t = write(d, {2, 0}, dir, &stats);
  EXPECT_EQ(stats.events_written, 2);
  EXPECT_EQ(stats.events_cut, 3);
  EXPECT_EQ(stats.cut_reason, "max_events");
  std::size_t events = 0;
  for (const json& e : t["traceEvents"]) events += e["ph"] != "M";
  EXPECT_EQ(events, 2u);
  EXPECT_EQ(t["regiontrace"]["cut"]["reason"], "max_events");
  EXPECT_EQ(t["regiontrace"]["cut"]["events_left_out"], 3);
  EXPECT_EQ(t["regiontrace"]["cut"]["op_calls_not_recorded"], 9);
  EXPECT_EQ(find(t, "aten::mm"), nullptr);  // the latest ones went
}

// The markers say where collection stopped, which a cut trace needs most:
// the disable marker (the latest event here) stays, the op goes.
TEST(ChromeTraceWriter, CollectionMarkersAreNeverCut) {
  TempDir dir;
  TraceWriteStats stats;
  const json t = write(sample(), {3, 0}, dir, &stats);
  EXPECT_EQ(stats.events_written, 3);
  EXPECT_EQ(stats.events_cut, 2);  // mm and the allocation
  const json* off = find(t, "fastvideo.profiler.disable_collection");
  ASSERT_NE(off, nullptr);
  EXPECT_EQ((*off)["ts"], 4000);  // 5 ms after the base, 1 ms before the first event
  EXPECT_NE(find(t, "fastvideo.profiler.enable_collection"), nullptr);
  EXPECT_NE(find(t, "fastvideo.region::denoise"), nullptr);
  EXPECT_EQ(find(t, "aten::mm"), nullptr);
}

// Memory events go to the op open on the thread when they happened. Where
// one op ends and the next starts in the same microsecond, the free belongs
// to the one that ends and the allocation to the one that starts; a child's
// events count in its parent.
TEST(ChromeTraceWriter, MemoryDeltaFollowsTheOpOpenAtTheEvent) {
  TempDir dir;
  TraceData d;
  d.profile_memory = true;
  auto op = [&](const char* name, std::int64_t start_us, std::int64_t dur_us) {
    OpRecord r;
    r.name = name;
    r.thread = 1;
    r.start_ns = kBase + start_us * 1000;
    r.duration_ns = dur_us * 1000;
    d.ops.push_back(r);
  };
  auto memory = [&](std::int64_t at_us, std::int64_t bytes) {
    OpRecord r;
    r.kind = OpRecord::Kind::kMemory;
    r.name = "[memory]";
    r.thread = 1;
    r.start_ns = kBase + at_us * 1000;
    r.bytes = bytes;
    d.ops.push_back(r);
  };
  op("aten::first", 10, 10);   // [10, 20]
  op("aten::second", 20, 10);  // [20, 30], calls inner
  op("aten::inner", 21, 10);   // [21, 31]: stamped 1 us past its caller
  memory(10, 100);             // first's output
  memory(20, -8);              // first's temporary, freed as it ends
  memory(20, 64);              // second's output
  memory(25, 2048);            // inner's
  const json t = write(d, {}, dir);
  auto delta = [&](const char* name) {
    const json* e = find(t, name);
    return e == nullptr ? -1 : (*e)["args"]["Memory Delta (bytes)"].get<long long>();
  };
  EXPECT_EQ(delta("aten::first"), 92);
  EXPECT_EQ(delta("aten::second"), 64 + 2048);
  EXPECT_EQ(delta("aten::inner"), 2048);
}

TEST(ChromeTraceWriter, MaxBytesBoundsTheFile) {
  TempDir dir;
  TraceData d = sample();
  for (int i = 0; i < 2000; ++i) {
    OpRecord op = d.ops[0];
    op.start_ns += i * 1000;
    d.ops.push_back(op);
  }
  TraceWriteStats stats;
  const json t = write(d, {0, 50000}, dir, &stats);
  EXPECT_LE(stats.bytes, 50000u);
  EXPECT_GT(stats.events_written, 50);
  EXPECT_EQ(stats.cut_reason, "max_trace_mb");
  EXPECT_EQ(t["regiontrace"]["cut"]["reason"], "max_trace_mb");
}

TEST(ChromeTraceWriter, NamesAreEscaped) {
  TempDir dir;
  TraceData d = sample();
  d.ops[0].name = "my \"op\"\n\\";
  const json t = write(d, {}, dir);
  EXPECT_NE(find(t, "my \"op\"\n\\"), nullptr);
}

TEST(ChromeTraceWriter, DeviceActivityHasATrackPerStreamAndLinksToItsOp) {
  TempDir dir;
  TraceData d = sample();
  d.ops[0].external_id = 5;  // aten::mm
  OpRecord launch;
  launch.name = "cudaLaunchKernel";
  launch.thread = 11;
  launch.start_ns = kBase + 2'000'600;
  launch.duration_ns = 300;
  launch.correlation_id = 9;
  launch.external_id = 5;
  d.ops.push_back(launch);
  OpRecord kernel;
  kernel.kind = OpRecord::Kind::kDevice;
  kernel.name = "sgemm_128x64";
  kernel.device_type = 1;
  kernel.device_index = 0;
  kernel.stream = 7;
  kernel.thread = device_track(0, 7);
  kernel.start_ns = kBase + 2'003'000;
  kernel.duration_ns = 4'000;
  kernel.correlation_id = 9;
  kernel.external_id = 5;
  d.ops.push_back(kernel);
  d.threads.push_back({device_track(0, 7), "cuda:0 stream 7"});
  const json t = write(d, {}, dir);

  const json* k = find(t, "sgemm_128x64");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ((*k)["cat"], "kernel");
  EXPECT_EQ((*k)["tid"], device_track(0, 7));
  EXPECT_EQ((*k)["args"]["device"], 0);
  EXPECT_EQ((*k)["args"]["stream"], 7);
  EXPECT_EQ((*k)["args"]["correlation"], 9);
  EXPECT_EQ((*k)["args"]["External id"], 5);
  const json* l = find(t, "cudaLaunchKernel");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ((*l)["tid"], 11);
  EXPECT_EQ((*l)["args"]["correlation"], 9);
  EXPECT_EQ((*find(t, "aten::mm"))["args"]["External id"], 5);
  bool named = false;
  for (const json& e : t["traceEvents"]) {
    named |=
        e["ph"] == "M" && e["tid"] == device_track(0, 7) && e["args"]["name"] == "cuda:0 stream 7";
  }
  EXPECT_TRUE(named);
  // The stream's track is no OS thread's: above every pid Linux hands out.
  EXPECT_GT(device_track(0, 0), std::uint64_t(1) << 32);
  EXPECT_NE(device_track(0, 7), device_track(1, 7));
}

// Each activity keeps the category Kineto gives it, so HTA and TensorBoard
// sort them as they sort torch.profiler's own traces.
TEST(ChromeTraceWriter, ActivitiesKeepKinetosCategories) {
  TempDir dir;
  TraceData d = sample();
  const std::vector<std::pair<std::string, bool>> activities = {
      {"kernel", true},       {"gpu_memcpy", true},
      {"gpu_memset", true},   {"gpu_user_annotation", true},
      {"cuda_sync", true},    {"cuda_runtime", false},
      {"cuda_driver", false}, {"user_annotation", false}};
  for (const auto& [category, on_device] : activities) {
    OpRecord r;
    r.kind = on_device ? OpRecord::Kind::kDevice : OpRecord::Kind::kCpuOp;
    r.category = category;
    r.name = "activity " + category;
    r.thread = on_device ? device_track(0, 7) : 11;
    r.device_index = on_device ? 0 : -1;
    r.stream = on_device ? 7 : -1;
    r.start_ns = kBase + 2'001'000;
    r.duration_ns = 100;
    d.ops.push_back(r);
  }
  const json t = write(d, {}, dir);
  for (const auto& [category, on_device] : activities) {
    const json* e = find(t, "activity " + category);
    ASSERT_NE(e, nullptr) << category;
    EXPECT_EQ((*e)["cat"], category);
  }
  EXPECT_EQ((*find(t, "aten::mm"))["cat"], "cpu_op");  // no category read: the kind's own
}

// Kineto names every CPU op's External id, kernels or not.
TEST(ChromeTraceWriter, CpuOnlyTracesCarryExternalIdsButNoCorrelation) {
  TempDir dir;
  TraceData d = sample();
  d.ops[0].external_id = 5;
  d.ops[0].sequence_nr = 9;
  d.ops[0].fwd_thread = 2;
  d.ops[0].event_index = 0;
  const json t = write(d, {}, dir);
  const json& args = (*find(t, "aten::mm"))["args"];
  EXPECT_EQ(args["External id"], 5);
  EXPECT_EQ(args["Sequence number"], 9);
  EXPECT_EQ(args["Fwd thread id"], 2);
  EXPECT_EQ(args["Ev Idx"], 0);
  EXPECT_FALSE(args.contains("correlation"));
}

// HolisticTraceAnalysis takes the rank from the first `"rank":\s+(\d+)` in
// the file, the way json.dumps spaces Kineto's distributedInfo.
TEST(ChromeTraceWriter, WritesKinetosMetadataWithARankHtaFinds) {
  TempDir dir;
  TraceData d = sample();
  d.trace_name = "/out/torch_trace_rank3_pid77.pt.trace.json.gz";
  write(d, {}, dir);
  const std::string text = read_maybe_gzip(dir.file("t.json"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"("rank":\s+(\d+))"))) << text;
  EXPECT_EQ(m[1], "3");
  EXPECT_LT(m.position(0), text.find("\"traceEvents\""));
  const json t = json::parse(text);
  EXPECT_EQ(t["schemaVersion"], 1);
  EXPECT_EQ(t["deviceProperties"], json::array());
  EXPECT_EQ(t["distributedInfo"], json::parse(R"({"rank":3,"world_size":4})"));
  EXPECT_EQ(t["traceName"], d.trace_name);
  EXPECT_TRUE(t["host_name"].is_string());
  EXPECT_EQ(t["trace_id"].get<std::string>().size(), 32u);
  EXPECT_TRUE(t["baseTimeNanoseconds"].is_number_integer());
}

// With CUDA activity the sink lists the GPUs as Kineto does: its key names,
// which TensorBoard's profiler plugin reads for its GPU views.
TEST(ChromeTraceWriter, ListsTheGpusUnderKinetosDevicePropertyNames) {
  TempDir dir;
  TraceData d = sample();
  DeviceProperties h200;
  h200.id = 0;
  h200.name = "NVIDIA H200";
  h200.total_global_mem = 150754820096;
  h200.compute_major = 9;
  h200.compute_minor = 0;
  h200.max_threads_per_block = 1024;
  h200.max_threads_per_multiprocessor = 2048;
  h200.regs_per_block = 65536;
  h200.warp_size = 32;
  h200.shared_mem_per_block = 49152;
  h200.num_sms = 132;
  h200.regs_per_multiprocessor = 65536;
  h200.shared_mem_per_block_optin = 232448;
  h200.shared_mem_per_multiprocessor = 233472;
  d.devices = {h200, h200};
  d.devices[1].id = 1;
  write(d, {}, dir);
  const json t = json::parse(read_maybe_gzip(dir.file("t.json")));
  ASSERT_EQ(t["deviceProperties"].size(), 2u);
  EXPECT_EQ(t["deviceProperties"][0], json::parse(R"({
      "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132,
      "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
      "sharedMemPerMultiprocessor": 233472})"));
  EXPECT_EQ(t["deviceProperties"][1]["id"], 1);
}

// Whole-microsecond stamps (libtorch 1.13's; rounding anywhere) put
// aten::copy_ [813.895, 816.895] 1 us past the aten::_to_copy [799.895,
// 815.895] that called it, and an op's start before its region. Written, the
// child is clamped into its parent, an op mostly inside the region into it,
// and one mostly after it after it; the region keeps its stamps.
TEST(ChromeTraceWriter, ChildrenAreClampedIntoTheirParentsAsWritten) {
  TempDir dir;
  TraceData d = sample();
  d.ops.clear();
  d.markers.clear();
  auto op = [&](const char* name, std::int64_t start_us, std::int64_t dur_us) {
    OpRecord o;
    o.name = name;
    o.thread = 11;
    o.start_ns = kBase + start_us * 1000;
    o.duration_ns = dur_us * 1000;
    d.ops.push_back(o);
  };
  // The region: [1'000'000.105, 5'000'000.105] ns after kBase, sub-microsecond.
  d.spans[0].start_ns = kBase + 1'000'000 + 105;
  d.spans[0].end_ns = kBase + 5'000'000 + 105;
  op("aten::to", 1'000, 20);        // starts 0.105 us before the region
  op("aten::_to_copy", 1'001, 16);  // [1001, 1017] us
  op("aten::copy_", 1'015, 3);      // [1015, 1018]: 1 us past its parent
  op("aten::add", 4'999, 3);        // past the region's end
  const json t = write(d, {}, dir);
  EXPECT_EQ(regiontrace::test::check_trace_nesting(t).violation_count, 0);

  const json& region = *find(t, "fastvideo.region::denoise");
  // The base is the earliest event's whole microsecond: ops' ts are integers.
  EXPECT_EQ(t["baseTimeNanoseconds"], kBase + 1'000'000);
  EXPECT_DOUBLE_EQ(region["ts"].get<double>(), 0.105);
  EXPECT_EQ(region["dur"], 4000);  // sub-microsecond times kept: exact
  const json& to = *find(t, "aten::to");
  EXPECT_DOUBLE_EQ(to["ts"].get<double>(), 0.105);  // clamped to the region's start
  EXPECT_DOUBLE_EQ(to["dur"].get<double>(), 19.895);
  const json& copy = *find(t, "aten::copy_");
  EXPECT_EQ(copy["ts"], 15);
  // Clamped to end with _to_copy at 17, and 1 ns before it (slice_times.hpp).
  EXPECT_DOUBLE_EQ(copy["dur"].get<double>(), 1.999);
  const json& add = *find(t, "aten::add");
  // [4999, 5002] us crosses the region's end at 5000.105, mostly after it:
  // it ran after the region, and begins 1 ns after the region's end.
  EXPECT_DOUBLE_EQ(add["ts"].get<double>(), 4000.106);
  EXPECT_DOUBLE_EQ(add["ts"].get<double>() + add["dur"].get<double>(), 4002);

  // The summary's rule gives the same clamped times.
  std::vector<nesting::Span> spans = {{d.spans[0].start_ns, d.spans[0].end_ns, true}};
  for (const OpRecord& o : d.ops) spans.push_back({o.start_ns, o.start_ns + o.duration_ns, false});
  const nesting::Nested n = nesting::nest(spans);
  EXPECT_EQ(n.clamped_end[3] - kBase - 1'000'105, 16'895);
  EXPECT_EQ(n.clamped_start[1] - kBase - 1'000'105, 0);
}

// libtorch's op clock runs tens of ns ahead of the regions': the aten::mm
// that ended just before a region began is stamped ending 40 ns inside it.
// The region is written with its own stamps and the op is cut at the
// region's start (the region was cut to 40 ns, ending with the mm).
TEST(ChromeTraceWriter, ARegionIsWrittenAsLongAsItWasWhateverTheOpsClock) {
  TempDir dir;
  TraceData d = sample();
  d.ops.clear();
  d.markers.clear();
  d.region_names = {"", "denoise", "backward"};
  RegionSpan backward = d.spans[0];
  backward.region = 2;
  backward.start_ns = kBase + 3'000'000;
  backward.end_ns = kBase + 4'000'000;
  backward.path = "pipeline/denoise/backward";
  backward.depth = 2;
  d.spans.push_back(backward);
  auto op = [&](const char* name, std::int64_t start, std::int64_t end) {
    OpRecord o;
    o.name = name;
    o.thread = 11;
    o.start_ns = kBase + start;
    o.duration_ns = end - start;
    d.ops.push_back(o);
  };
  op("aten::mm", 2'000'000, 3'000'040);
  op("aten::sin", 3'500'000, 3'600'000);
  const json t = write(d, {}, dir);
  EXPECT_EQ(regiontrace::test::check_trace_nesting(t).violation_count, 0);
  const json& span = *find(t, "fastvideo.region::backward");
  EXPECT_EQ(span["dur"], 1000) << span;  // as recorded: [3 ms, 4 ms)
  const json& mm = *find(t, "aten::mm");
  EXPECT_LE(mm["ts"].get<double>() + mm["dur"].get<double>(), span["ts"].get<double>()) << mm;
  const json& sin = *find(t, "aten::sin");
  EXPECT_EQ(sin["dur"], 100);

  // A short op that ended 300 ns before the region began keeps its 500 ns
  // (it was written as a 1 ns slice inside the region).
  d.ops.clear();
  op("aten::neg", 2'999'200, 2'999'700);
  const json u = write(d, {}, dir);
  EXPECT_DOUBLE_EQ((*find(u, "aten::neg"))["dur"].get<double>(), 0.5);
  EXPECT_EQ((*find(u, "fastvideo.region::backward"))["dur"], 1000);
}

// An op stamped with no duration (it took less than libtorch's microsecond)
// is written 1 ns long, inside its parent: speedscope turns each slice into a
// begin and an end event and sorts an empty slice's end before its begin
// when another slice begins at the same time, and then never closes the
// parent. The op summary counts the same nanosecond.
TEST(ChromeTraceWriter, EmptyOpsAreWrittenOneNanosecondLong) {
  TempDir dir;
  TraceData d = sample();
  d.ops.clear();
  auto op = [&](const char* name, std::int64_t start_us, std::int64_t dur_us) {
    OpRecord o;
    o.name = name;
    o.thread = 11;
    o.start_ns = kBase + start_us * 1000;
    o.duration_ns = dur_us * 1000;
    d.ops.push_back(o);
  };
  op("aten::arange", 2'000, 4);  // begins with its first child
  op("aten::empty", 2'000, 0);
  op("aten::resize_", 2'000, 0);
  op("aten::zero_", 2'004, 0);  // at arange's end: after it, not in it
  const json t = write(d, {}, dir);
  EXPECT_EQ(regiontrace::test::check_trace_nesting(t).violation_count, 0);
  // It ends where zero_ begins: 1 ns before it (slice_times.hpp).
  EXPECT_DOUBLE_EQ((*find(t, "aten::arange"))["dur"].get<double>(), 3.999);
  EXPECT_DOUBLE_EQ((*find(t, "aten::empty"))["ts"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ((*find(t, "aten::empty"))["dur"].get<double>(), 0.001);
  // Stamped at the same time as empty, it ran after it: its sibling, 1 ns on.
  EXPECT_DOUBLE_EQ((*find(t, "aten::resize_"))["ts"].get<double>(), 1000.002);
  EXPECT_DOUBLE_EQ((*find(t, "aten::resize_"))["dur"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ((*find(t, "aten::zero_"))["ts"].get<double>(), 1004);
  EXPECT_DOUBLE_EQ((*find(t, "aten::zero_"))["dur"].get<double>(), 0.001);
  const OpSummary s = summarize(d);
  std::int64_t self = 0;
  std::int64_t total = 0;
  for (const OpStats& r : s.by_op) {
    self += r.self_ns;
    if (r.name == "aten::empty") EXPECT_EQ(r.total_ns, 1);
    if (r.name == "aten::arange") total = r.total_ns;
  }
  EXPECT_EQ(total, 3999);
  EXPECT_EQ(self, 3999 + 1);  // arange's time, and zero_ outside it
}

// set_step(n) leaves ProfilerStep#n spans on a "steps" track of the process,
// a tid of its own above the caller's, so they cross no region or op slice.
TEST(ChromeTraceWriter, StepSpansGoOnTheirOwnNamedTrack) {
  TempDir dir;
  TraceData d = sample();
  StepSpan s4;
  s4.step = 4;
  s4.thread = 11;
  s4.start_ns = kBase + 500'000;
  s4.end_ns = kBase + 3'000'000;
  s4.clipped_begin = true;
  StepSpan s5 = s4;
  s5.step = 5;
  s5.start_ns = kBase + 3'000'000;
  s5.end_ns = kBase + 6'000'000;
  s5.clipped_begin = false;
  s5.open_at_end = true;
  d.steps = {s4, s5};
  const json t = write(d, {}, dir);
  EXPECT_EQ(t["baseTimeNanoseconds"], kBase + 500'000);  // steps count for the base
  std::vector<json> steps;
  int step_track_names = 0;
  for (const json& e : t["traceEvents"]) {
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0) steps.push_back(e);
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "steps") {
      EXPECT_EQ(e["tid"], 11 + kStepTrackOffset);
      ++step_track_names;
    }
  }
  EXPECT_EQ(step_track_names, 1);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["name"], "ProfilerStep#4");
  EXPECT_EQ(steps[0]["ph"], "X");
  EXPECT_EQ(steps[0]["tid"], 11 + kStepTrackOffset);
  EXPECT_EQ(steps[0]["pid"], 77);
  EXPECT_EQ(steps[0]["args"]["step"], 4);
  EXPECT_EQ(steps[0]["args"]["clipped_begin"], true);
  EXPECT_EQ(steps[0]["ts"], 0);
  EXPECT_EQ(steps[0]["dur"], 2500);
  EXPECT_EQ(steps[1]["name"], "ProfilerStep#5");
  EXPECT_EQ(steps[1]["ts"], 2500);  // where step 4 ends
  EXPECT_EQ(steps[1]["dur"], 3000);
  EXPECT_EQ(steps[1]["args"]["open_at_end"], true);
}

// The shared "regiontrace" member: who wrote it and the clock pairs, with
// the base on CLOCK_MONOTONIC (epoch base minus the offset between clocks).
TEST(ChromeTraceWriter, CarriesClockSyncAndAMonotonicBase) {
  TempDir dir;
  TraceData d = sample();
  d.local_rank = 1;
  d.realtime_minus_monotonic_ns = kBase - 5'000'000'000;  // monotonic: booted 5 s before kBase
  d.clock_start = {kBase - 1000, 4'999'999'000};
  d.clock_end = {kBase + 9'000'000, 5'009'000'000};
  const json t = write(d, {}, dir);
  EXPECT_EQ(t["baseTimeNanoseconds"], 5'001'000'000);
  const json& m = t["regiontrace"];
  EXPECT_EQ(m["sink"], "torch_profiler");
  EXPECT_EQ(m["rank"], 3);
  EXPECT_EQ(m["local_rank"], 1);
  EXPECT_EQ(m["world_size"], 4);
  EXPECT_EQ(m["pid"], 77);
  // Where it ran and on which CPUs (regiontrace report finds oversubscribed
  // hosts with them): this process's own affinity, as a Linux CPU list.
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(m["host"], host);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const std::string cpus = m["cpus"].get<std::string>();
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(cpus.find_first_not_of("0123456789,-") == std::string::npos) << cpus;
  int listed = 0;
  for (std::size_t at = 0; at < cpus.size();) {
    std::size_t end = cpus.find(',', at);
    if (end == std::string::npos) end = cpus.size();
    const std::string part = cpus.substr(at, end - at);
    const auto dash = part.find('-');
    listed += dash == std::string::npos
                  ? 1
                  : std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    at = end + 1;
  }
  EXPECT_EQ(listed, CPU_COUNT(&set)) << cpus;
  EXPECT_EQ(m["clockSync"]["start"]["realtime_ns"], kBase - 1000);
  EXPECT_EQ(m["clockSync"]["start"]["monotonic_ns"], 4'999'999'000);
  EXPECT_EQ(m["clockSync"]["end"]["monotonic_ns"], 5'009'000'000);
  EXPECT_EQ(m["prefix"], "fastvideo");  // the sink's own members follow
  EXPECT_EQ(m["events"], 5);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
