// Process lifecycle: a forked child never writes into its parent's files, and
// a write failure switches the sink off while the application goes on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "memory_test_support.hpp"
#include "remove_tree.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

// Freeing tensors that existed before the sink listened makes libtorch's CPU
// allocator log a warning (through c10's logger, or glog where libtorch uses
// it); a normal run must not see that (nor glog's "Logging before
// InitGoogleLogging()").
TEST(MemoryLifecycle, LibtorchsAllocatorWarningsStayOutOfANormalRun) {
  CleanEnv env;
  TempDir dir;
  const std::string err = dir.file("stderr.txt");
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    // libtorch logs one in a thousand unknown frees: free more than that.
    std::vector<Buffer> before(1001);
    for (Buffer& b : before) b = Buffer(64);
    SinkRun run(memory_options(dir.path()));
    {
      RT_REGION("frees_older_tensors");
      before.clear();
      allocate_and_free(kKiB);
    }
    run.stop();
    return 0;
  });
  ASSERT_TRUE(child.exited && child.exit_code == 0);
  const std::string log = regiontrace::test::read_file(err);
  EXPECT_EQ(log.find("Memory block of unknown size"), std::string::npos) << log;
  EXPECT_EQ(log.find("InitGoogleLogging"), std::string::npos) << log;
  EXPECT_EQ(regiontrace::test::list_files(dir.path(), "memory_summary").size(), 1u);
}

TEST(MemoryLifecycle, AForkedChildWritesItsOwnFilesOnly) {
  CleanEnv env;
  TempDir dir;
  SinkRun run(memory_options(dir.path(), {{"track_allocations", "true"}}));
  Buffer parent_keep;
  {
    RT_REGION("parent_before");
    parent_keep = Buffer(64 * kKiB);
  }
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    // The parent's sink is gone here: allocations reach nobody...
    allocate_and_free(kMiB);
    { RT_REGION("ignored_in_child"); }
    // ...until the child starts its own, into its own files.
    init(memory_options(dir.path(), {{"track_allocations", "true"}}));
    {
      RT_REGION("child_work");
      allocate_and_free(2 * kMiB);
    }
    shutdown();
    return 0;
  });
  ASSERT_TRUE(child.exited);
  EXPECT_EQ(child.exit_code, 0);
  {
    RT_REGION("parent_after");
    allocate_and_free(3 * kMiB);
  }
  run.stop();

  const std::string parent_records =
      dir.file("memory_rank0_pid" + std::to_string(::getpid()) + ".jsonl");
  std::vector<std::string> paths;
  for (const json& r : regiontrace::test::read_jsonl(parent_records)) paths.push_back(r.at("path"));
  EXPECT_EQ(paths, (std::vector<std::string>{"parent_before", "parent_after"}));
  int child_files = 0;
  for (const std::string& f : regiontrace::test::list_files(dir.path(), "memory_rank0_pid")) {
    if (f == parent_records) continue;
    ++child_files;
    const std::vector<json> records = regiontrace::test::read_jsonl(f);
    ASSERT_EQ(records.size(), 1u) << f;
    EXPECT_EQ(records[0].at("path"), "child_work");
    const json& c = records[0].at("devices").at("cpu");
    EXPECT_EQ(c.at("peak_bytes").get<std::int64_t>() - c.at("entry_bytes").get<std::int64_t>(),
              2 * kMiB);
  }
  EXPECT_EQ(child_files, 1);
}

TEST(MemoryLifecycle, AWriteFailureSwitchesTheSinkOffAndTheApplicationGoesOn) {
  CleanEnv env;
  TempDir dir;
  const std::string out = dir.file("out");
  std::filesystem::create_directories(out);
  SinkRun run(memory_options(out));
  { RT_REGION("before"); }
  regiontrace::test::remove_tree(out);
  snapshot("into a folder that is gone");
  // The writer fails within milliseconds; the next region that reaches the
  // sink gets the error thrown at the host, which logs it, switches the sink
  // off and closes it. The application's regions go on.
  for (int i = 0; i < 30; ++i) {
    RT_REGION("after");
    allocate_and_free(kKiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::filesystem::create_directories(out);
  { RT_REGION("later"); }
  run.stop();
  // Switched off before `out` came back: nothing was written there since (a
  // running sink would have written its summary at shutdown).
  EXPECT_TRUE(regiontrace::test::list_files(out, "memory_").empty());
}

}  // namespace
}  // namespace regiontrace::memory::test
