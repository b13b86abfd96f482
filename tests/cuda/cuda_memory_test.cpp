// The memory_snapshot sink on a GPU: the caching allocator's figures per
// region, a pickled allocator snapshot PyTorch's readers open, and a
// snapshot when the device runs out of memory.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cuda_skip.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace {
namespace {

using nlohmann::json;
using test::CleanEnv;
using test::list_files;
using test::read_json;
using test::read_jsonl;
using test::TempDir;

constexpr std::int64_t kMiB = 1 << 20;

Options memory_on_gpu(const TempDir& dir) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", test::builtin_plugin_dir());
  o.set("output_dir", dir.path());
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.memory_snapshot.enabled", "true");
  o.set("sinks.memory_snapshot.snapshot_on_exit", "gpu_alloc");
  o.set("sinks.memory_snapshot.cuda_record_history", "true");
  return o;
}

const json* record_of(const std::vector<json>& records, const std::string& path) {
  for (const json& r : records) {
    if (r.value("path", "") == path) return &r;
  }
  return nullptr;
}

TEST(CudaMemory, RegionsCarryTheDeviceAndAPickledSnapshot) {
  REGIONTRACE_REQUIRE_CUDA();
  CleanEnv env;
  TempDir dir;
  init(memory_on_gpu(dir));
  at::Tensor kept;
  {
    RT_REGION("gpu_alloc");
    kept = at::ones({64 * kMiB / 4}, at::TensorOptions().device(at::kCUDA));
    at::Tensor scratch = at::ones({32 * kMiB / 4}, at::TensorOptions().device(at::kCUDA));
  }
  shutdown();

  const std::vector<std::string> jsonl = list_files(dir.path(), "memory_rank0_");
  ASSERT_EQ(jsonl.size(), 1u);
  const std::vector<json> records = read_jsonl(jsonl[0]);
  const json* r = record_of(records, "gpu_alloc");
  ASSERT_NE(r, nullptr) << "no record of gpu_alloc in " << jsonl[0];
  ASSERT_TRUE(r->at("devices").contains("cuda:0")) << r->dump();
  const json& gpu = r->at("devices").at("cuda:0");
  // 64 MiB kept, 32 MiB more at the peak inside.
  EXPECT_GE(gpu.at("exit_bytes").get<std::int64_t>() - gpu.at("entry_bytes").get<std::int64_t>(),
            64 * kMiB);
  EXPECT_GE(gpu.at("peak_bytes").get<std::int64_t>() - gpu.at("entry_bytes").get<std::int64_t>(),
            96 * kMiB);
  ASSERT_TRUE(gpu.contains("allocator")) << gpu.dump();
  EXPECT_GE(gpu.at("allocator").at("reserved_bytes").get<std::int64_t>(), 64 * kMiB);

  const std::vector<std::string> snapshots = list_files(dir.path(), "memory_snapshot_");
  std::string pickle;
  for (const std::string& f : snapshots) {
    if (f.size() > 7 && f.compare(f.size() - 7, 7, ".pickle") == 0) pickle = f;
  }
  ASSERT_FALSE(pickle.empty()) << "no .pickle among " << snapshots.size() << " snapshot files";
  std::ifstream in(pickle, std::ios::binary);
  const int protocol_marker = in.get();
  EXPECT_EQ(protocol_marker, 0x80) << pickle << " does not start like a pickle";
}

TEST(CudaMemory, OutOfMemoryWritesASnapshotNamingIt) {
  REGIONTRACE_REQUIRE_CUDA();
  CleanEnv env;
  TempDir dir;
  init(memory_on_gpu(dir));
  bool thrown = false;
  try {
    RT_REGION("too_big");
    // Far more than any GPU has: the caching allocator reports an OOM.
    at::Tensor huge = at::empty({std::int64_t(1) << 50}, at::TensorOptions().device(at::kCUDA));
  } catch (const c10::OutOfMemoryError&) {
    thrown = true;
  }
  shutdown();
  ASSERT_TRUE(thrown);
  bool found = false;
  for (const std::string& f : list_files(dir.path(), "memory_snapshot_")) {
    if (f.size() < 5 || f.compare(f.size() - 5, 5, ".json") != 0) continue;
    const json s = read_json(f);
    if (s.value("trigger", "") != "oom") continue;
    found = true;
    EXPECT_EQ(s.at("path"), "too_big");
    EXPECT_NE(s.at("reason").get<std::string>().find("cuda:0"), std::string::npos)
        << s.at("reason");
  }
  EXPECT_TRUE(found) << "no snapshot with trigger oom in " << dir.path();
}

}  // namespace
}  // namespace regiontrace
