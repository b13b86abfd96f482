// The timeline sink in real runs: regions, steps and marks recorded from
// several threads, read back from the .json.gz and checked for counts per
// thread, durations inside the run's wall time, nesting, paths, step spans
// on the "steps" track, marks, spans open at the end, drops (a tiny buffer,
// the max_events cap) counted exactly, the file name, and SIGTERM.
#include <gtest/gtest.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"
#include "timeline_trace.hpp"

namespace regiontrace::timeline::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Options timeline_options(const std::string& dir,
                         const std::map<std::string, std::string>& keys = {}) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", regiontrace::test::builtin_plugin_dir());
  o.set("output_dir", dir);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.timeline.regions", "*");
  for (const auto& [k, v] : keys) o.set("sinks.timeline." + k, v);
  return o;
}

long gettid_now() {
  return static_cast<long>(::syscall(SYS_gettid));
}

// `outer` spans each holding `inner` spans "outer/inner" on one thread.
void work(int outer, int inner) {
  for (int i = 0; i < outer; ++i) {
    RT_REGION("outer");
    for (int j = 0; j < inner; ++j) {
      RT_REGION("inner");
    }
  }
}

TEST(TimelineSink, SpansPerThreadNestInsideTheRun) {
  CleanEnv env;
  TempDir dir;
  const std::int64_t before = monotonic_ns();
  init(timeline_options(dir.path()));
  std::mutex m;
  std::set<long> tids;
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k) {
    threads.emplace_back([&] {
      {
        std::lock_guard<std::mutex> lock(m);
        tids.insert(gettid_now());
      }
      work(200, 5);
    });
  }
  for (std::thread& t : threads) t.join();
  shutdown();
  const std::int64_t after = monotonic_ns();

  const std::string path = only_trace(dir.path());
  EXPECT_EQ(path, dir.path() + "/timeline_rank0_pid" + std::to_string(::getpid()) + ".json.gz");
  const json trace = read_gzip_json(path);
  EXPECT_EQ(trace.at("schemaVersion"), 1);
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  const std::int64_t base = trace.at("baseTimeNanoseconds").get<std::int64_t>();
  const json& meta = trace.at("regiontrace");
  EXPECT_EQ(meta.at("sink"), "timeline");
  EXPECT_EQ(meta.at("pid"), ::getpid());
  EXPECT_LE(meta.at("clockSync").at("start").at("monotonic_ns").get<std::int64_t>(),
            meta.at("clockSync").at("end").at("monotonic_ns").get<std::int64_t>());
  EXPECT_EQ(trace.at("timeline").at("dropped"), 0);
  EXPECT_EQ(trace.at("timeline").at("recorded"), 3 * 200 * 6);

  const auto tracks = spans_by_track(trace);
  ASSERT_EQ(tracks.size(), 3u);
  for (const auto& [track, spans] : tracks) {
    EXPECT_EQ(track.first, ::getpid());
    EXPECT_EQ(tids.count(track.second), 1u) << track.second;
    int outer = 0, inner = 0;
    for (const json& s : spans) {
      EXPECT_EQ(s.at("cat"), "user_annotation");
      const std::string region = s.at("args").at("region");
      EXPECT_EQ(s.at("name"), "region::" + region);
      if (region == "outer") {
        ++outer;
        EXPECT_EQ(s.at("args").at("path"), "outer");
        EXPECT_EQ(s.at("args").at("depth"), 0);
      } else {
        ++inner;
        EXPECT_EQ(s.at("args").at("path"), "outer/inner");
        EXPECT_EQ(s.at("args").at("depth"), 1);
      }
      EXPECT_FALSE(s.at("args").contains("step"));
      // Inside the run's wall time (the clock is within 50 us of CLOCK_MONOTONIC).
      const double begin_ns = base + s.at("ts").get<double>() * 1000;
      const double end_ns = begin_ns + s.at("dur").get<double>() * 1000;
      EXPECT_GE(begin_ns, before - 50000.0);
      EXPECT_LE(end_ns, after + 50000.0);
      EXPECT_GE(s.at("dur").get<double>(), 0.0);
    }
    EXPECT_EQ(outer, 200);
    EXPECT_EQ(inner, 1000);
  }
  EXPECT_EQ(nesting_violation(trace), "");
  std::set<long> named;
  int process_names = 0;
  for (const json& e : events(trace, "M")) {
    if (e.at("name") == "thread_name") named.insert(e.at("tid").get<long>());
    if (e.at("name") == "process_name") {
      ++process_names;
      EXPECT_EQ(e.at("args").at("name"), "rank 0 (pid " + std::to_string(::getpid()) + ")");
    }
  }
  EXPECT_EQ(process_names, 1);
  for (long tid : tids) EXPECT_EQ(named.count(tid), 1u) << tid;
}

TEST(TimelineSink, StepSpansOnTheStepsTrackAndMarks) {
  CleanEnv env;
  TempDir dir;
  init(timeline_options(dir.path()));
  const long tid = gettid_now();
  for (int step = 0; step < 4; ++step) {
    set_step(step);
    RT_REGION("train_step");
    mark("cfg_switch");
  }
  mark("outside");  // outside every region
  shutdown();
  const json trace = read_gzip_json(only_trace(dir.path()));
  std::vector<json> steps, regions;
  for (const json& e : events(trace, "X"))
    (e.at("name").get<std::string>().rfind("ProfilerStep#", 0) == 0 ? steps : regions).push_back(e);
  ASSERT_EQ(steps.size(), 4u);
  std::sort(steps.begin(), steps.end(),
            [](const json& a, const json& b) { return a.at("ts") < b.at("ts"); });
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].at("name"), "ProfilerStep#" + std::to_string(i));
    EXPECT_EQ(steps[i].at("args").at("step"), static_cast<int>(i));
    EXPECT_EQ(steps[i].at("tid"), tid + 1000000000);
    if (i + 1 < steps.size()) {
      // From one set_step to 1 ns before the next, as torch_profiler writes
      // them: in the file's integer nanoseconds, end + 1 == next begin.
      const auto ns = [](const json& us) { return std::llround(us.get<double>() * 1000); };
      EXPECT_EQ(ns(steps[i].at("ts")) + ns(steps[i].at("dur")) + 1, ns(steps[i + 1].at("ts")));
    }
  }
  bool steps_named = false;
  for (const json& e : events(trace, "M")) {
    if (e.at("name") == "thread_name" && e.at("tid") == tid + 1000000000) {
      steps_named = e.at("args").at("name") == "steps";
    }
  }
  EXPECT_TRUE(steps_named);
  ASSERT_EQ(regions.size(), 4u);
  for (const json& r : regions) {
    EXPECT_EQ(r.at("tid"), tid);
    // Each region lies inside its step's span.
    const json& s = steps[r.at("args").at("step").get<std::size_t>()];
    EXPECT_GE(r.at("ts").get<double>(), s.at("ts").get<double>());
  }
  std::vector<json> marks = events(trace, "i");
  ASSERT_EQ(marks.size(), 5u);
  std::sort(marks.begin(), marks.end(),
            [](const json& a, const json& b) { return a.at("ts") < b.at("ts"); });
  EXPECT_EQ(marks.back().at("name"), "outside");
  EXPECT_EQ(marks.back().at("args").at("path"), "");
  EXPECT_EQ(marks.back().at("args").at("step"), 3);
  marks.pop_back();
  std::set<int> mark_steps;
  for (const json& m : marks) {
    EXPECT_EQ(m.at("name"), "cfg_switch");
    EXPECT_EQ(m.at("cat"), "mark");
    EXPECT_EQ(m.at("s"), "t");
    EXPECT_EQ(m.at("tid"), tid);
    EXPECT_EQ(m.at("args").at("path"), "train_step");
    mark_steps.insert(m.at("args").at("step").get<int>());
  }
  EXPECT_EQ(mark_steps, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(nesting_violation(trace), "");
}

TEST(TimelineSink, RegionsOpenAtShutdownEndThere) {
  CleanEnv env;
  TempDir dir;
  init(timeline_options(dir.path()));
  auto outer = begin("still_open");
  { RT_REGION("finished"); }
  auto inner = begin("also_open");
  const std::int64_t before_shutdown = monotonic_ns();
  shutdown();
  const std::int64_t after_shutdown = monotonic_ns();
  end(inner);
  end(outer);
  const json trace = read_gzip_json(only_trace(dir.path()));
  const std::int64_t base = trace.at("baseTimeNanoseconds").get<std::int64_t>();
  std::map<std::string, json> by_region;
  for (const json& e : events(trace, "X")) by_region[e.at("args").at("region")] = e;
  ASSERT_EQ(by_region.size(), 3u);
  EXPECT_FALSE(by_region.at("finished").at("args").contains("open_at_end"));
  EXPECT_EQ(by_region.at("finished").at("args").at("path"), "still_open/finished");
  for (const char* name : {"still_open", "also_open"}) {
    const json& s = by_region.at(name);
    EXPECT_EQ(s.at("args").at("open_at_end"), true) << name;
    const double end_ns = base + (s.at("ts").get<double>() + s.at("dur").get<double>()) * 1000;
    EXPECT_GE(end_ns, before_shutdown - 50000.0) << name;
    EXPECT_LE(end_ns, after_shutdown + 50000.0) << name;
  }
  EXPECT_EQ(by_region.at("also_open").at("args").at("path"), "still_open/also_open");
  EXPECT_EQ(nesting_violation(trace), "");
}

TEST(TimelineSink, MaxEventsKeepsWholeSpansAndCountsTheRest) {
  CleanEnv env;
  TempDir dir;
  init(timeline_options(dir.path(), {{"max_events", "1000"}}));
  work(1000, 4);  // 5000 spans
  shutdown();
  const json trace = read_gzip_json(only_trace(dir.path()));
  EXPECT_EQ(events(trace, "X").size(), 1000u);
  EXPECT_EQ(trace.at("timeline").at("recorded"), 1000);
  EXPECT_EQ(trace.at("timeline").at("dropped_over_cap"), 4000);
  EXPECT_EQ(trace.at("timeline").at("dropped"), 4000);
  EXPECT_EQ(nesting_violation(trace), "");
}

TEST(TimelineSink, FullBuffersDropWholeSpansAndCountThem) {
  CleanEnv env;
  TempDir dir;
  // 1 MiB: 16 chunks of 64 KiB. The host hands a thread's spans over when
  // its buffer of 1024 fills; the thread then holds a chunk until it exits,
  // so of 24 threads that each filled one and wait, at least 8 find none.
  init(timeline_options(dir.path(), {{"buffer_mb", "1"}}));
  constexpr int kThreads = 24;
  constexpr int kFirstBatch = 1024;
  constexpr int kPerThread = kFirstBatch + 6;
  std::mutex m;
  std::condition_variable cv;
  int recorded = 0;
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&] {
      work(kPerThread, 0);
      std::unique_lock<std::mutex> lock(m);
      ++recorded;
      cv.notify_all();
      cv.wait(lock, [&] { return recorded == kThreads; });
    });
  }
  for (std::thread& t : threads) t.join();
  shutdown();
  const json trace = read_gzip_json(only_trace(dir.path()));
  const json& stats = trace.at("timeline");
  const int spans = static_cast<int>(events(trace, "X").size());
  EXPECT_EQ(stats.at("recorded"), spans);
  EXPECT_EQ(spans + stats.at("dropped_buffer_full").get<int>(), kThreads * kPerThread);
  EXPECT_GE(stats.at("dropped_buffer_full").get<int>(), (kThreads - 16) * kFirstBatch);
  EXPECT_EQ(stats.at("dropped_over_cap"), 0);
  // A span is kept or dropped whole: what is kept nests.
  EXPECT_EQ(nesting_violation(trace), "");
}

// The host hands a live thread's spans over from the stopping thread: they
// are still written on that thread's track, under its own name.
TEST(TimelineSink, ALiveThreadsSpansAreWrittenOnItsTrackUnderItsName) {
  CleanEnv env;
  TempDir dir;
  init(timeline_options(dir.path()));
  regiontrace::test::Rendezvous rendezvous;
  long worker_tid = 0;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "rt-live-worker");
    worker_tid = gettid_now();
    RT_REGION("held");
    work(5, 0);
    rendezvous.park();
  });
  rendezvous.wait_parked();
  shutdown();
  rendezvous.release();
  worker.join();

  const json trace = read_gzip_json(only_trace(dir.path()));
  const auto tracks = spans_by_track(trace);
  ASSERT_EQ(tracks.count({::getpid(), worker_tid}), 1u);
  const std::vector<json>& spans = tracks.at({::getpid(), worker_tid});
  ASSERT_EQ(spans.size(), 6u);
  int open = 0;
  for (const json& s : spans) {
    if (s.at("args").at("region") == "held") {
      EXPECT_EQ(s.at("args").at("open_at_end"), true);
      ++open;
    } else {
      EXPECT_EQ(s.at("args").at("path"), "held/outer");
    }
  }
  EXPECT_EQ(open, 1);
  bool named = false;
  for (const json& e : events(trace, "M")) {
    if (e.at("name") == "thread_name" && e.at("tid") == worker_tid) {
      named = e.at("args").at("name") == "rt-live-worker";
    }
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(nesting_violation(trace), "");
}

// The host never deletes a sink (a late callback may race close()), so
// what a closed timeline keeps stays for the life of the process: each
// init()/shutdown() cycle kept its recording thread's 64 KiB chunk and a
// 64 KiB page directory (~150 kB a cycle). Now: the slot itself, a few kB.
TEST(TimelineSink, ACycleOfInitAndShutdownKeepsLittleMemory) {
  CleanEnv env;
  TempDir dir;
  auto heap_in_use = [] {
    const struct mallinfo2 m = ::mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd);
  };
  auto cycle = [&] {
    init(timeline_options(dir.path()));
    for (int i = 0; i < 3000; ++i) {  // past the host's first hand-over: a chunk is in use
      RT_REGION("cycle");
    }
    shutdown();
  };
  for (int i = 0; i < 3; ++i) cycle();  // one-time state: libraries, the host's tables
  ::malloc_trim(0);
  const double before = heap_in_use();
  constexpr int kCycles = 20;
  for (int i = 0; i < kCycles; ++i) cycle();
  ::malloc_trim(0);
  const double per_cycle = (heap_in_use() - before) / kCycles;
  EXPECT_LT(per_cycle, 48 * 1024.0) << "bytes of heap kept per init()/shutdown() cycle";
  // Every cycle's trace is kept (a session after the first adds its number
  // to the file name) and whole.
  const std::vector<std::string> files = regiontrace::test::output_files(dir.path(), "timeline");
  EXPECT_EQ(files.size(), 3u + kCycles);
  for (const std::string& f : files) EXPECT_EQ(events(read_gzip_json(f), "X").size(), 3000u) << f;
  std::printf("heap %+.1f kB per init()/shutdown() cycle\n", per_cycle / 1024);
}

TEST(TimelineSink, RankAndPidInTheFileName) {
  CleanEnv env;
  regiontrace::test::ScopedEnv rank({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"}});
  TempDir dir;
  Options o = timeline_options(dir.path());
  o.read_environment = true;
  init(o);
  work(2, 1);
  shutdown();
  const std::string path = only_trace(dir.path());
  EXPECT_EQ(path, dir.path() + "/timeline_rank3_pid" + std::to_string(::getpid()) + ".json.gz");
  const json trace = read_gzip_json(path);
  EXPECT_EQ(trace.at("regiontrace").at("rank"), 3);
  EXPECT_EQ(trace.at("regiontrace").at("world_size"), 4);
  for (const json& e : events(trace, "M")) {
    if (e.at("name") == "process_name") {
      EXPECT_EQ(e.at("args").at("name"), "rank 3 (pid " + std::to_string(::getpid()) + ")");
    }
  }
}

TEST(TimelineSink, BadSettingsNameTheKeyAndTheValidRange) {
  CleanEnv env;
  TempDir dir;
  try {
    init(timeline_options(dir.path(), {{"buffer_mb", "0"}}));
    ADD_FAILURE() << "init accepted buffer_mb 0";
  } catch (const regiontrace::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("buffer_mb"), std::string::npos) << what;
    EXPECT_NE(what.find("1"), std::string::npos) << what;
  }
  shutdown();
}

// std::exit with no shutdown(): the host's exit handler closes the sink
// after the main thread's thread_locals are gone; a worker still inside a
// region ends at the write.
TEST(TimelineSink, ExitWithoutShutdownWritesEverything) {
  CleanEnv env;
  TempDir dir;
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    init(timeline_options(dir.path()));
    std::atomic<bool> inside{false};
    std::thread worker([&] {
      RT_REGION("worker_forever");
      work(50, 2);
      inside = true;
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    });
    worker.detach();
    while (!inside) std::this_thread::yield();
    auto t = begin("main_open");
    (void)t;
    work(100, 1);
    return 0;  // run_in_child exits with std::exit
  });
  EXPECT_TRUE(child.exited);
  EXPECT_EQ(child.exit_code, 0);
  const json trace = read_gzip_json(only_trace(dir.path()));
  std::map<std::string, int> count;
  std::map<std::string, int> open_at_end;
  for (const json& e : events(trace, "X")) {
    const std::string region = e.at("args").at("region");
    ++count[region];
    if (e.at("args").value("open_at_end", false)) ++open_at_end[region];
  }
  EXPECT_EQ(count["outer"], 150);
  EXPECT_EQ(count["inner"], 200);
  EXPECT_EQ(open_at_end["worker_forever"], 1);
  // The host ends the main thread's regions when its thread_locals go, so
  // this one arrives as an ordinary span, once.
  EXPECT_EQ(count["main_open"], 1);
  EXPECT_EQ(trace.at("timeline").at("dropped"), 0);
  EXPECT_EQ(nesting_violation(trace), "");
}

// A forked worker never writes its parent's trace; one that starts its own
// sink writes a file of its own, under its pid, with only its regions.
TEST(TimelineSink, ForkedChildWritesOnlyItsOwnTrace) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot follow a forked child that starts threads "
                  "(\"dup thread with used id\")";
#endif
  REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN();
  CleanEnv env;
  TempDir dir;
  init(timeline_options(dir.path()));
  work(10, 1);
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    init(timeline_options(dir.path()));
    work(7, 0);
    return 0;
  });
  work(10, 1);
  shutdown();
  ASSERT_TRUE(child.exited);
  EXPECT_EQ(child.exit_code, 0);
  const std::vector<std::string> files = regiontrace::test::output_files(dir.path(), "timeline");
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    const json trace = read_gzip_json(f);
    const long pid = trace.at("regiontrace").at("pid").get<long>();
    EXPECT_NE(f.find("_pid" + std::to_string(pid) + ".json.gz"), std::string::npos) << f;
    const std::size_t spans = events(trace, "X").size();
    if (pid == ::getpid()) {
      EXPECT_EQ(spans, 40u) << f;
    } else {
      EXPECT_EQ(pid, child.pid);
      EXPECT_EQ(spans, 7u) << f;
    }
  }
}

// Open descriptors of this process on the sink's (unlinked) temporary file.
int open_spill_files() {
  int n = 0;
  for (const std::string& fd : regiontrace::test::list_files("/proc/self/fd")) {
    char target[4096] = {0};
    const ssize_t len = ::readlink(fd.c_str(), target, sizeof(target) - 1);
    if (len > 0 && std::string(target).find(".timeline_spill_") != std::string::npos) ++n;
  }
  return n;
}

// The sink object outlives shutdown() (late callbacks may still come), so
// close() itself gives the temporary file's disk back.
TEST(TimelineSink, ShutdownReleasesTheTemporaryFile) {
  CleanEnv env;
  TempDir dir;
  const int before = open_spill_files();
  init(timeline_options(dir.path()));
  work(10, 1);
  EXPECT_EQ(open_spill_files(), before + 1);
  shutdown();
  EXPECT_EQ(open_spill_files(), before);
  EXPECT_EQ(read_gzip_json(only_trace(dir.path())).at("timeline").at("recorded"), 20);
}

TEST(TimelineSink, SigtermLeavesAWholeTrace) {
  CleanEnv env;
  TempDir dir;
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    Options o = timeline_options(dir.path());
    o.set("handle_signals", "true");
    init(o);
    for (int i = 0; i < 1000000; ++i) {
      set_step(i);
      RT_REGION("step");
      { RT_REGION("work"); }
      if (i == 300) ::kill(::getpid(), SIGTERM);
      if (i > 300) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return 3;
  });
  EXPECT_FALSE(child.exited);
  EXPECT_EQ(child.signal, SIGTERM);
  const json trace = read_gzip_json(only_trace(dir.path()));
  int work_spans = 0;
  for (const json& e : events(trace, "X")) work_spans += e.at("args").value("region", "") == "work";
  EXPECT_GE(work_spans, 301);
  EXPECT_EQ(nesting_violation(trace), "");
  // No temporary file is left beside it.
  EXPECT_EQ(regiontrace::test::list_files(dir.path()).size(),
            regiontrace::test::output_files(dir.path(), "timeline").size() +
                regiontrace::test::list_files(dir.path(), "regiontrace_config").size());
}

// A file size limit makes every write past it fail (EFBIG), as a full disk
// does (ENOSPC): the limit is set on this process only while the sink
// writes, with SIGXFSZ ignored as a shell that sets `ulimit -f` would.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lower = saved_;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// Stderr through a pipe, which no file size limit cuts (gtest's
// CaptureStderr writes into a file).
class StderrPipe {
 public:
  StderrPipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    std::fflush(stderr);
    saved_ = ::dup(2);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    reader_ = std::thread([this, in = fds[0]] {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(in, buffer, sizeof(buffer))) > 0) text_.append(buffer, n);
      ::close(in);
    });
  }
  ~StderrPipe() { take(); }
  std::string take() {
    if (saved_ >= 0) {
      std::fflush(stderr);
      ::dup2(saved_, 2);  // the last writer end closes: the reader ends
      ::close(saved_);
      saved_ = -1;
      reader_.join();
    }
    return text_;
  }

 private:
  int saved_ = -1;
  std::string text_;
  std::thread reader_;
};

// 256 KiB for each file: the temporary file fills after 4 chunks (the rest
// stay in memory) and the whole trace (about 2 MB gzipped) does not fit,
// so the sink writes the first part of the run that does, ending spans
// running at the cut there, and says so.
TEST(TimelineSink, AFullDiskKeepsTheFirstPartOfTheRunAndSaysWhere) {
  CleanEnv env;
  TempDir dir;
  constexpr int kSpans = 40000 * 6;
  StderrPipe err;
  {
    FileSizeLimit limit(256 << 10);
    init(timeline_options(dir.path()));
    for (int s = 0; s < 40; ++s) {
      set_step(s);
      work(1000, 5);
    }
    shutdown();
  }
  const std::string log = err.take();
  const std::string path = only_trace(dir.path());
  const json trace = read_gzip_json(path);
  const json& stats = trace.at("timeline");
  const std::int64_t cut_ns = stats.at("written_until_ns").get<std::int64_t>();
  const int written = static_cast<int>(events(trace, "X").size());
  const int cut = stats.at("dropped_disk_full").get<int>();
  EXPECT_GT(written, 0) << log;
  EXPECT_GT(cut, 0);
  // Every span and step recorded is either in the trace or counted.
  const int steps = static_cast<int>(trace.at("traceEvents").size()) - written;
  EXPECT_EQ(stats.at("recorded").get<int>() + cut, kSpans + 40) << steps;
  EXPECT_EQ(stats.at("dropped").get<int>(), cut);
  EXPECT_EQ(stats.at("dropped_buffer_full"), 0);
  // Nothing after the cut; what ran across it ends there.
  const double base_us = trace.at("baseTimeNanoseconds").get<double>() / 1000.0;
  const double cut_us = static_cast<double>(cut_ns) / 1000.0 - base_us;
  int running = 0;
  for (const json& e : events(trace, "X")) {
    const double end = e.at("ts").get<double>() + e.at("dur").get<double>();
    EXPECT_LE(end, cut_us + 0.001) << e.dump();
    running += e.at("args").value("open_at_end", false);
  }
  EXPECT_LE(running, 3);  // at most a step, an outer and an inner region
  EXPECT_EQ(nesting_violation(trace), "");
  EXPECT_NE(log.find("keeps its events in memory"), std::string::npos) << log;
  EXPECT_NE(log.find("the disk could not hold the whole timeline"), std::string::npos) << log;
  EXPECT_NE(log.find(path + " has the first "), std::string::npos) << log;
  EXPECT_NE(log.find(std::to_string(cut) + " of "), std::string::npos) << log;
  EXPECT_EQ(log.find("max_events"), std::string::npos) << log;
}

// Not even the header fits: an error that says how many events are lost,
// and no file, whole or partial, is left behind.
TEST(TimelineSink, ADiskWithNoRoomSaysWhatIsLostAndLeavesNoFile) {
  CleanEnv env;
  TempDir dir;
  StderrPipe err;
  {
    FileSizeLimit limit(64);
    init(timeline_options(dir.path()));
    work(100, 1);
    shutdown();
  }
  const std::string log = err.take();
  EXPECT_TRUE(regiontrace::test::output_files(dir.path(), "timeline").empty());
  EXPECT_TRUE(regiontrace::test::list_files(dir.path(), ".timeline").empty());
  EXPECT_NE(log.find("cannot write the timeline"), std::string::npos) << log;
  EXPECT_NE(log.find("File too large): its 200 events are lost"), std::string::npos) << log;
  EXPECT_EQ(log.find("see "), std::string::npos) << log;
}

}  // namespace
}  // namespace regiontrace::timeline::test
