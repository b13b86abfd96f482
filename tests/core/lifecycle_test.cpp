// Process lifecycle: one dispatcher for every library, lazy start from the
// environment, whole files at normal exit, std::exit and SIGTERM, and forked
// children that never write into their parent's files.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "recorded_events.hpp"
#include "regiontrace/inspect.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

int lib_a_work(int x);  // tests/libs: two shared libraries using regions

namespace regiontrace::test {
namespace {

TEST(Lifecycle, OneDispatcherForEverySharedLibrary) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  {
    RT_REGION("test_main");
    EXPECT_EQ(lib_a_work(20), 41);
  }
  shutdown();
  const auto begins = events_of(read_jsonl(file), "begin");
  ASSERT_EQ(begins.size(), 3u);
  EXPECT_EQ(begins[2]["path"], "test_main/lib_a.work/lib_b.work");
}

TEST(Lifecycle, LazyStartFromTheEnvironmentAndFlushAtNormalExit) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  const ChildResult r = run_in_child([&] {
    setenv("REGIONTRACE_PLUGIN_PATH", test_plugin_dir().c_str(), 1);
    setenv("REGIONTRACE_SINKS", "recorder", 1);
    setenv("REGIONTRACE_RECORDER_FILE", file.c_str(), 1);
    setenv("REGIONTRACE_OUTPUT_DIR", dir.path().c_str(), 1);
    shutdown();  // forget the state the test runner left
    init();
    RT_REGION("exits_normally");
    return 0;  // std::exit runs the exit handlers with the region still open
  });
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  const auto events = read_jsonl(file);
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin exits_normally", "end exits_normally"}));
  EXPECT_EQ(events.back()["event"], "close");
  // The effective configuration is written next to the outputs, in
  // regiontrace_config/ (the folder itself is one HTA loads as traces),
  // named like them (rank and pid), so runs into one folder never overwrite
  // it.
  EXPECT_TRUE(list_files(dir.path(), "regiontrace_config_").empty());
  const auto configs = list_files(dir.file("regiontrace_config"), "regiontrace_config_rank0");
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(std::filesystem::path(configs[0]).filename().string(),
            "regiontrace_config_rank0_pid" + std::to_string(r.pid) + ".json");
  const auto cfg = read_json(configs[0]);
  EXPECT_EQ(cfg["values"]["sinks.recorder.file"]["source"], "env REGIONTRACE_RECORDER_FILE");
  EXPECT_EQ(cfg["sinks"][0], "recorder");
}

TEST(Lifecycle, SigtermLeavesWholeFiles) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  const ChildResult r = run_in_child([&] {
    init(recorder_options(file));
    RT_REGION("interrupted");
    mark("before_kill");
    kill(getpid(), SIGTERM);
    for (int i = 0; i < 500; ++i) usleep(10000);  // the watcher flushes, then the signal kills
    return 3;
  });
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGTERM);
  const auto events = read_jsonl(file);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events_of(events, "mark").size(), 1u);
  EXPECT_EQ(events.back()["event"], "close");
}

TEST(Lifecycle, ForkedChildNeverWritesIntoItsParentsFiles) {
  REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN();
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("parent.jsonl");
  init(recorder_options(file));
  { RT_REGION("parent_before"); }
  const ChildResult r = run_in_child([&] {
    { RT_REGION("child_silent"); }
    // A child may start its own sinks; the file names carry its pid.
    Options o = recorder_options(dir.file("unused.jsonl"));
    o.values.erase("sinks.recorder.file");
    o.set("sinks.recorder.enabled", "true");
    init(o);
    { RT_REGION("child_own"); }
    shutdown();
    return 0;
  });
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  { RT_REGION("parent_after"); }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin parent_before", "end parent_before",
                                      "begin parent_after", "end parent_after"}));
  const auto child_files = list_files(dir.path(), "recorder_rank0_pid");
  ASSERT_EQ(child_files.size(), 1u);
  EXPECT_EQ(child_files[0].find("pid" + std::to_string(getpid())), std::string::npos);
  EXPECT_EQ(region_sequence(read_jsonl(child_files[0])),
            (std::vector<std::string>{"begin child_own", "end child_own"}));
}

TEST(Lifecycle, SecondInitKeepsTheRunningSinks) {
  CleanEnv env;
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  init(recorder_options(first));
  init(recorder_options(dir.file("second.jsonl")));
  { RT_REGION("once"); }
  shutdown();
  shutdown();  // idempotent
  EXPECT_EQ(region_sequence(read_jsonl(first)),
            (std::vector<std::string>{"begin once", "end once"}));
  EXPECT_FALSE(std::filesystem::exists(dir.file("second.jsonl")));
}

// flush(): what the sinks accepted is written while they go on; the names of
// the running sinks are there to ask for. Before init() and after shutdown()
// both are harmless.
TEST(Lifecycle, FlushWritesWhatTheSinksHoldAndTheyGoOn) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  flush();
  EXPECT_TRUE(inspect::running_sinks().empty());
  init(recorder_options(file));
  EXPECT_EQ(inspect::running_sinks(), std::vector<std::string>{"recorder"});
  { RT_REGION("before_flush"); }
  EXPECT_FALSE(std::filesystem::exists(file));  // the recorder writes on flush and close
  flush();
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin before_flush", "end before_flush"}));
  { RT_REGION("after_flush"); }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin before_flush", "end before_flush", "begin after_flush",
                                      "end after_flush"}));
  flush();
  EXPECT_TRUE(inspect::running_sinks().empty());
}

TEST(Lifecycle, OnlySinksThatWriteFilesGetAnOutputFolder) {
  CleanEnv env;
  TempDir dir;
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", test_plugin_dir());
  o.set("sinks.noop.output_dir", dir.file("noop_out"));
  o.set("sinks.recorder.output_dir", dir.file("recorder_out/nested"));
  init(o);
  { RT_REGION("with_two_sinks"); }
  EXPECT_FALSE(std::filesystem::exists(dir.file("noop_out")));
  shutdown();
  EXPECT_FALSE(std::filesystem::exists(dir.file("noop_out")));
  EXPECT_EQ(list_files(dir.file("recorder_out/nested"), "recorder_rank0_pid").size(), 1u);
  EXPECT_EQ(
      list_files(dir.file("recorder_out/nested/regiontrace_config"), "regiontrace_config_rank0_pid")
          .size(),
      1u);

  // Alone, the sink that writes nothing runs and still makes no folder.
  Options alone;
  alone.read_environment = false;
  alone.set("plugins.paths", test_plugin_dir());
  alone.set("output_dir", dir.file("regiontrace_out"));
  alone.set("sinks.noop.enabled", "true");
  init(alone);
  EXPECT_TRUE(enabled());
  shutdown();
  EXPECT_FALSE(std::filesystem::exists(dir.file("regiontrace_out")));
}

// `config_snapshot: false` keeps a sink's folder to its own files (FastVideo's
// tests read its folder so); the other sinks' folders still get the
// configuration.
TEST(Lifecycle, ConfigSnapshotFalseLeavesTheSinksFolderToItsOwnFiles) {
  CleanEnv env;
  TempDir dir;
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", test_plugin_dir());
  o.set("sinks.recorder.output_dir", dir.file("traces"));
  o.set("sinks.recorder.config_snapshot", "false");
  init(o);
  { RT_REGION("without_a_snapshot"); }
  shutdown();
  EXPECT_EQ(list_files(dir.file("traces"), "recorder_rank0_pid").size(), 1u);
  EXPECT_TRUE(list_files(dir.file("traces"), "regiontrace_config").empty());

  o.set("sinks.recorder.config_snapshot", "true");
  init(o);
  { RT_REGION("with_a_snapshot"); }
  shutdown();
  EXPECT_EQ(output_files(dir.file("traces/regiontrace_config"), "regiontrace_config").size(), 1u);
}

TEST(Lifecycle, NoSinkConfiguredMeansOff) {
  CleanEnv env;
  shutdown();
  Options o;
  o.read_environment = false;
  init(o);
  EXPECT_FALSE(enabled());
  { RT_REGION("nobody_listens"); }
}

}  // namespace
}  // namespace regiontrace::test
