#include "device_windows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace regiontrace::torch_profiler {
namespace {

constexpr std::uint64_t kMain = 11;
constexpr std::uint64_t kLoader = 12;

OpRecord host(const std::string& name, std::uint64_t thread, std::int64_t start,
              std::uint64_t external_id, const char* category = "cpu_op") {
  OpRecord r;
  r.name = name;
  r.category = category;
  r.thread = thread;
  r.start_ns = start;
  r.duration_ns = 10;
  r.external_id = external_id;
  return r;
}

OpRecord launch(std::uint64_t thread, std::int64_t start, std::uint64_t correlation,
                std::uint64_t op_id) {
  OpRecord r = host("cudaLaunchKernel", thread, start, op_id, "cuda_runtime");
  r.correlation_id = correlation;
  return r;
}

OpRecord device(const std::string& name, const char* category, std::int64_t start,
                std::uint64_t correlation, std::uint64_t op_id = 0) {
  OpRecord r;
  r.kind = OpRecord::Kind::kDevice;
  r.category = category;
  r.name = name;
  r.thread = device_track(0, 7);
  r.start_ns = start;
  r.duration_ns = 50;
  r.correlation_id = correlation;
  r.external_id = op_id;
  return r;
}

bool has(const TraceData& d, const std::string& name) {
  return std::any_of(d.ops.begin(), d.ops.end(), [&](const OpRecord& o) { return o.name == name; });
}

// The main thread collects in [1000, 2000] and [5000, open); the loader
// thread never does. CUDA activity ran the whole session.
TraceData session() {
  TraceData d;
  d.markers = {
      {true, kMain, 1000, "region"}, {false, kMain, 2000, "region"}, {true, kMain, 5000, "region"}};
  d.ops.push_back(host("aten::mm", kMain, 1100, 1));  // recorded: inside a window
  d.ops.push_back(launch(kMain, 1110, 101, 1));
  d.ops.push_back(device("sgemm in region", "kernel", 1200, 101, 1));
  // Between the windows: the gate recorded no op, so the launch links to none.
  d.ops.push_back(launch(kMain, 3000, 102, 0));
  d.ops.push_back(device("sgemm between regions", "kernel", 3100, 102));
  d.ops.push_back(device("Memcpy between regions", "gpu_memcpy", 3200, 103));
  d.ops.push_back(launch(kMain, 3190, 103, 0));
  // A bare runtime call (no op around it) on the main thread inside a window.
  d.ops.push_back(launch(kMain, 5100, 104, 0));
  d.ops.push_back(device("custom kernel in region", "kernel", 5200, 104));
  // Another thread that never collected.
  d.ops.push_back(launch(kLoader, 1500, 105, 0));
  d.ops.push_back(device("loader copy", "gpu_memcpy", 1600, 105));
  // Unlinked device annotations: kept when they overlap a window.
  d.ops.push_back(device("annotation in region", "gpu_user_annotation", 1900, 0));
  d.ops.push_back(device("annotation between", "gpu_user_annotation", 3500, 0));
  return d;
}

TEST(DeviceWindows, KeepsWhatTheSelectedRegionsLaunched) {
  TraceData d = session();
  const DeviceFilterStats stats = keep_device_activity_in_windows(d);
  EXPECT_TRUE(has(d, "aten::mm"));
  EXPECT_TRUE(has(d, "sgemm in region"));
  EXPECT_TRUE(has(d, "custom kernel in region"));
  EXPECT_TRUE(has(d, "annotation in region"));
  EXPECT_FALSE(has(d, "sgemm between regions"));
  EXPECT_FALSE(has(d, "Memcpy between regions"));
  EXPECT_FALSE(has(d, "loader copy"));
  EXPECT_FALSE(has(d, "annotation between"));
  EXPECT_EQ(stats.runtime_calls_left_out, 3u);
  EXPECT_EQ(stats.device_records_left_out, 4u);
  // Kept: the op, 2 launches, 2 kernels, 1 annotation.
  EXPECT_EQ(d.ops.size(), 6u);
}

TEST(DeviceWindows, CpuOnlyTracesAreLeftAlone) {
  TraceData d;
  d.ops.push_back(host("aten::add", kMain, 100, 0));  // no markers at all
  const DeviceFilterStats stats = keep_device_activity_in_windows(d);
  EXPECT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(stats.runtime_calls_left_out + stats.device_records_left_out, 0u);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
