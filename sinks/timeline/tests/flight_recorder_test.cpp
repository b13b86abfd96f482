// The flight recorders (the timeline and region_stats sinks) while the
// program runs and after it dies: each flush leaves a trace and statistics
// that parse, hold every region finished so far once, show the regions still
// open and the current step as running until the flush, and say
// "incomplete"; a normal shutdown replaces them with the finished files; a
// process killed with SIGKILL or ended by _exit() leaves what its last flush
// wrote, whole.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"
#include "timeline_trace.hpp"

namespace regiontrace::timeline::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

Options flight_options(const std::string& dir, const std::string& interval) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", regiontrace::test::builtin_plugin_dir());
  o.set("output_dir", dir);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("flush_interval_s", interval);
  o.set("sinks.timeline.regions", "*");
  o.set("sinks.region_stats.regions", "*");
  o.set("sinks.region_stats.table", "off");
  return o;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// Region spans by region name: finished ones, and open ones (open_at_end).
struct Spans {
  std::map<std::string, int> finished;
  std::map<std::string, int> open;
};
Spans spans_of(const json& trace) {
  Spans s;
  for (const json& e : events(trace, "X")) {
    const json& args = e.at("args");
    if (!args.contains("region")) continue;  // a step
    (args.value("open_at_end", false) ? s.open : s.finished)[args.at("region")] += 1;
  }
  return s;
}

std::map<std::string, std::int64_t> step_spans(const json& trace) {
  std::map<std::string, std::int64_t> out;
  for (const json& e : events(trace, "X")) {
    const std::string name = e.at("name");
    if (name.rfind("ProfilerStep#", 0) == 0) out[name] = e.at("dur").get<std::int64_t>();
  }
  return out;
}

std::int64_t count_of(const json& stats, const std::string& path) {
  for (const json& r : stats.at("regions")) {
    if (r.at("path") == path) return r.at("count").get<std::int64_t>();
  }
  return 0;
}

TEST(FlightRecorder, EachFlushLeavesTheRunSoFarAndShutdownTheWholeOne) {
  CleanEnv env;
  TempDir dir;
  init(flight_options(dir.path(), "0"));  // flushed by hand below
  const std::string trace_path =
      dir.path() + "/timeline_rank0_pid" + std::to_string(::getpid()) + ".json.gz";
  const std::string stats_path =
      dir.path() + "/region_stats_rank0_pid" + std::to_string(::getpid()) + ".json";
  // Written at start: a run killed before its first flush leaves a trace.
  {
    const json trace = read_gzip_json(trace_path);
    EXPECT_EQ(trace.at("regiontrace").at("incomplete"), true);
    EXPECT_EQ(events(trace, "X").size(), 0u);
  }
  {
    RT_REGION("outer");
    set_step(1);
    for (int i = 0; i < 50; ++i) {
      RT_REGION("inner");
    }
    mark("halfway");
    set_step(2);
    flush();
    const json trace = read_gzip_json(trace_path);
    const json& meta = trace.at("regiontrace");
    EXPECT_EQ(meta.at("incomplete"), true);
    EXPECT_GT(meta.at("written_until_ns").get<std::int64_t>(),
              trace.at("baseTimeNanoseconds").get<std::int64_t>());
    Spans s = spans_of(trace);
    EXPECT_EQ(s.finished["inner"], 50);
    EXPECT_EQ(s.finished["outer"], 0);
    EXPECT_EQ(s.open["outer"], 1);
    for (const json& e : events(trace, "X")) {
      if (e.at("args").value("region", "") == "inner")
        EXPECT_EQ(e.at("args").at("path"), "outer/inner");
    }
    EXPECT_EQ(events(trace, "i").size(), 1u);
    // Step 1 ended where step 2 began; step 2 runs until the flush.
    const auto steps = step_spans(trace);
    EXPECT_EQ(steps.count("ProfilerStep#1"), 1u);
    EXPECT_EQ(steps.count("ProfilerStep#2"), 1u);
    EXPECT_EQ(nesting_violation(trace), "");
    const json stats = read_json(stats_path);
    EXPECT_EQ(stats.at("incomplete"), true);
    EXPECT_EQ(count_of(stats, "outer/inner"), 50);

    for (int i = 0; i < 30; ++i) {
      RT_REGION("inner");
    }
    flush();
    const json again = read_gzip_json(trace_path);
    s = spans_of(again);
    EXPECT_EQ(s.finished["inner"], 80);  // each once
    EXPECT_EQ(s.open["outer"], 1);
    EXPECT_EQ(step_spans(again).size(), 2u);
    EXPECT_EQ(nesting_violation(again), "");
    EXPECT_EQ(count_of(read_json(stats_path), "outer/inner"), 80);
  }
  shutdown();
  const json trace = read_gzip_json(trace_path);
  EXPECT_FALSE(trace.at("regiontrace").contains("incomplete"));
  Spans s = spans_of(trace);
  EXPECT_EQ(s.finished["inner"], 80);
  EXPECT_EQ(s.finished["outer"], 1);
  EXPECT_EQ(s.open.size(), 0u);
  EXPECT_EQ(trace.at("timeline").at("recorded"), 81 + 1 + 2);  // regions, the mark, steps
  const json stats = read_json(stats_path);
  EXPECT_FALSE(stats.contains("incomplete"));
  EXPECT_EQ(count_of(stats, "outer"), 1);
}

// A worker that dies with no chance to close its sinks: the files of its
// last flush, whole, with what ran until about then.
void dies_while_recording(bool sigkill) {
  CleanEnv env;
  TempDir dir;
  int progress[2];
  ASSERT_EQ(::pipe(progress), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(progress[0]);
    init(flight_options(dir.path(), "0.05"));
    RT_REGION("worker_forever");
    for (int i = 1;; ++i) {
      {
        RT_REGION("step");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (i % 50 == 0) {
        const int done = i;
        if (::write(progress[1], &done, sizeof(done)) != sizeof(done)) ::_exit(3);
        if (!sigkill && i == 300) ::_exit(0);  // as os._exit() does: nothing runs after
      }
    }
  }
  ::close(progress[1]);
  int done = 0;
  int last = 0;
  while (::read(progress[0], &done, sizeof(done)) == sizeof(done)) {
    last = done;
    if (sigkill && last >= 300) {
      ::kill(child, SIGKILL);
      break;
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(progress[0]);
  if (sigkill) {
    ASSERT_TRUE(WIFSIGNALED(status));
  } else {
    ASSERT_TRUE(WIFEXITED(status));
  }
  const std::string stem = "_rank0_pid" + std::to_string(child);
  const json trace = read_gzip_json(dir.path() + "/timeline" + stem + ".json.gz");
  EXPECT_EQ(trace.at("regiontrace").at("incomplete"), true);
  Spans s = spans_of(trace);
  // Flushed every 50 ms while a step takes over 1 ms: most of the 300
  // steps are in, none more than ran.
  EXPECT_GE(s.finished["step"], 100) << "of " << last;
  EXPECT_LE(s.finished["step"], last + 50);
  EXPECT_EQ(s.open["worker_forever"], 1);
  EXPECT_EQ(nesting_violation(trace), "");
  const json stats = read_json(dir.path() + "/region_stats" + stem + ".json");
  EXPECT_EQ(stats.at("incomplete"), true);
  EXPECT_GE(count_of(stats, "worker_forever/step"), 100);
  EXPECT_LE(count_of(stats, "worker_forever/step"), last + 50);
}

TEST(FlightRecorder, AWorkerKilledBySigkillLeavesItsLastFlush) {
  REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN();
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot follow a forked child that starts threads";
#endif
  dies_while_recording(true);
}

TEST(FlightRecorder, AWorkerEndedByExitLeavesItsLastFlush) {
  REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN();
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot follow a forked child that starts threads";
#endif
  dies_while_recording(false);
}

}  // namespace
}  // namespace regiontrace::timeline::test
