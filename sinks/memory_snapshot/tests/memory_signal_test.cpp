// Files are whole when the process is ended by SIGTERM: the host closes the
// sink from its signal thread, the sink drains and finishes every file.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "memory_test_support.hpp"
#include "torch_workload.hpp"

namespace regiontrace::memory::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

TEST(MemorySignals, FilesAreWholeAfterSigterm) {
  CleanEnv env;
  TempDir dir;
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    Options o = memory_options(dir.path(), {{"track_allocations", "true"}});
    o.set("handle_signals", "true");
    init(o);
    std::vector<Buffer> kept;
    for (int i = 0; i < 100000; ++i) {
      set_step(i);
      RT_REGION("step");
      {
        RT_REGION("work");
        allocate_and_free(16 * kKiB);
        kept.emplace_back(kKiB);
      }
      if (i == 300) {
        snapshot("before the signal");
        ::kill(::getpid(), SIGTERM);
      }
      if (i > 300) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 3;  // the signal should have ended the process long before
  });
  EXPECT_FALSE(child.exited);
  EXPECT_EQ(child.signal, SIGTERM);
  const MemoryOutputs out = read_outputs(dir.path());  // every file parses
  EXPECT_GE(out.records.size(), 2u * 300u);
  EXPECT_EQ(out.summary.at("records").at("written").get<std::size_t>(), out.records.size());
  ASSERT_EQ(out.snapshots.size(), 1u);
  EXPECT_EQ(snapshot_region(out.snapshots[0], "step/work")->at("count"), 301);
  ASSERT_TRUE(out.trace.is_object());
  std::size_t spans = 0;
  for (const json& e : out.trace.at("traceEvents")) spans += e.at("ph") == "X";
  EXPECT_EQ(spans, out.records.size());
}

}  // namespace
}  // namespace regiontrace::memory::test
