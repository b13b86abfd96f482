// The JSON outputs for cases the CPU-only integration tests cannot produce
// (CUDA devices, allocator statistics), parsed back with a real parser.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "memory_record_json.hpp"
#include "snapshot_format.hpp"

namespace regiontrace::memory {
namespace {

using nlohmann::json;

TEST(OutputFormat, RegionRecordWithACudaDevice) {
  RegionPaths paths(16);
  RegionRecord r;
  r.figures.path = paths.intern("train/\"quoted\"", "\"quoted\"");
  r.figures.step = 3;
  r.figures.start_ns = 1000;
  r.end_ns = 4000;
  const int cuda1 = cuda_device(1);
  r.figures.devices.push_back({kCpuDevice, 0, 0, 0});
  r.figures.devices.push_back({cuda1, 10, 30, 50});
  CudaFigures c;
  c.device = cuda1;
  c.stats.reserved_current = 2048;
  r.cuda.push_back(c);
  r.has_resident = true;
  r.resident = {4096, -1};
  std::string line;
  append_region_record(line, r, paths);
  ASSERT_EQ(line.back(), '\n');
  const json j = json::parse(line);
  EXPECT_EQ(j.at("path"), "train/\"quoted\"");
  EXPECT_EQ(j.at("duration_ns"), 3000);
  EXPECT_EQ(j.at("rss_bytes"), 4096);
  EXPECT_TRUE(j.at("hwm_bytes").is_null());
  EXPECT_EQ(j.at("devices").at("cuda:1").at("peak_bytes"), 50);
  EXPECT_EQ(j.at("devices").at("cuda:1").at("allocator").at("reserved_bytes"), 2048);
  EXPECT_FALSE(j.at("devices").at("cpu").contains("allocator"));
}

TEST(OutputFormat, SnapshotGroupsByRegionLargestFirst) {
  RegionPaths paths(16);
  const int small = paths.intern("a", "a");
  const int big = paths.intern("b", "b");
  SnapshotJob job;
  job.sequence = 4;
  job.trigger = "oom";
  job.reason = "out of memory";
  job.step = kNoStep;
  job.devices = 1u | (1u << cuda_device(0));
  job.tracking.enabled = true;
  auto add = [&](std::uintptr_t address, std::int64_t bytes, int path, std::int64_t step, int d) {
    LiveAllocation a;
    a.address = address;
    a.bytes = bytes;
    a.path = path;
    a.step = step;
    a.device = d;
    job.live.push_back(a);
  };
  add(0x10, 100, small, 1, kCpuDevice);
  add(0x20, 700, big, 1, kCpuDevice);
  add(0x30, 900, big, 2, cuda_device(0));
  add(0x40, 5, RegionPaths::kOutside, kNoStep, kCpuDevice);
  SnapshotContext ctx;
  ctx.max_allocations = 1;
  ctx.cuda_pickle_file = "memory_snapshot_0004_rank0_pid1.pickle";
  const json j = json::parse(format_snapshot(job, paths, ctx));
  EXPECT_EQ(j.at("live_bytes"), 1705);
  EXPECT_EQ(j.at("live_count"), 4);
  EXPECT_TRUE(j.at("step").is_null());
  EXPECT_EQ(j.at("cuda_snapshot"), ctx.cuda_pickle_file);
  ASSERT_EQ(j.at("regions").size(), 3u);
  const json& b = j.at("regions")[0];
  EXPECT_EQ(b.at("path"), "b");
  EXPECT_EQ(b.at("bytes"), 1600);
  EXPECT_EQ(b.at("devices").at("cpu"), 700);
  EXPECT_EQ(b.at("devices").at("cuda:0"), 900);
  ASSERT_EQ(b.at("largest").size(), 1u);
  EXPECT_EQ(b.at("largest")[0].at("address"), "0x30");
  EXPECT_EQ(b.at("largest")[0].at("device"), "cuda:0");
  ASSERT_EQ(b.at("by_step").size(), 2u);
  EXPECT_EQ(j.at("regions")[2].at("path"), "(outside regions)");
  EXPECT_TRUE(j.at("regions")[2].at("by_step")[0].at("step").is_null());
}

}  // namespace
}  // namespace regiontrace::memory
