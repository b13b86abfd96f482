#include "trace_retention.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

namespace regiontrace::torch_profiler {
namespace {

namespace fs = std::filesystem;
using regiontrace::test::list_files;
using regiontrace::test::TempDir;

void touch(const TempDir& dir, const std::string& name, int minutes_ago) {
  std::ofstream(dir.file(name)) << "{}";
  fs::last_write_time(dir.file(name),
                      fs::file_time_type::clock::now() - std::chrono::minutes(minutes_ago));
}

std::vector<std::string> names(const TempDir& dir) {
  std::vector<std::string> out;
  for (const std::string& p : list_files(dir.path())) out.push_back(fs::path(p).filename());
  return out;
}

TEST(TraceRetention, RecognisesOnlyTheSinksFilesOfTheRank) {
  EXPECT_TRUE(is_trace_file("torch_trace_rank0_pid12.pt.trace.json.gz", 0));
  EXPECT_TRUE(is_trace_file("torch_trace_rank0_pid12.3.pt.trace.json.gz", 0));
  EXPECT_TRUE(is_trace_file("torch_trace_1_rank0_pid12.3.pt.trace.json", 0));
  EXPECT_TRUE(is_trace_file("torch_trace_step-3_rank0_pid12.pt.trace.json.gz", 0));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.3.pt.trace.json.gz", 1));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.3.summary.json", 0));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.pt.json.gz", 0));
  // Traces written before the ".pt.trace" suffix still count for keep_last.
  EXPECT_TRUE(is_trace_file("torch_trace_rank0_pid12.json.gz", 0));
  EXPECT_TRUE(is_trace_file("torch_trace_step3_rank0_pid12.json", 0));
  EXPECT_TRUE(is_trace_file("torch_trace_step3_2_rank0_pid12.json", 0));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.json.gz", 1));
  EXPECT_FALSE(is_trace_file("torch_trace_rank10_pid12.json.gz", 1));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.summary.json", 0));
  EXPECT_FALSE(is_trace_file("my_torch_trace_rank0_pid12.json", 0));
  EXPECT_FALSE(is_trace_file("torch_trace_rank0_pid12.json.gz.tmp12", 0));
}

TEST(TraceRetention, KeepsTheNewestWithTheirSummaries) {
  TempDir dir;
  fs::create_directories(dir.file("summaries"));
  touch(dir, "torch_trace_rank0_pid1.pt.trace.json.gz", 30);
  touch(dir, "summaries/torch_trace_rank0_pid1.summary.txt", 30);
  touch(dir, "summaries/torch_trace_rank0_pid1.summary.json", 30);
  touch(dir, "torch_trace_rank0_pid2.3.pt.trace.json.gz", 20);
  touch(dir, "summaries/torch_trace_rank0_pid2.3.summary.txt", 20);
  touch(dir, "torch_trace_rank0_pid2.5.pt.trace.json.gz", 10);
  touch(dir, "summaries/torch_trace_rank0_pid2.5.summary.txt", 10);
  touch(dir, "summaries/torch_trace_rank0_pid2.5.summary.json", 10);
  touch(dir, "torch_trace_rank1_pid3.pt.trace.json.gz", 40);        // another rank
  touch(dir, "summaries/torch_trace_rank1_pid3.summary.json", 40);  // its summary
  touch(dir, "summaries/torch_trace_rank0_pid9.summary.json", 50);  // no trace: kept
  const std::vector<std::string> removed = remove_old_traces(dir.path(), 0, 2);
  EXPECT_EQ(removed.size(), 3u);
  EXPECT_EQ(names(dir), (std::vector<std::string>{
                            "summaries",
                            "torch_trace_rank0_pid2.3.pt.trace.json.gz",
                            "torch_trace_rank0_pid2.5.pt.trace.json.gz",
                            "torch_trace_rank1_pid3.pt.trace.json.gz",
                        }));
  std::vector<std::string> summaries;
  for (const std::string& p : list_files(dir.file("summaries"))) {
    summaries.push_back(fs::path(p).filename());
  }
  EXPECT_EQ(summaries, (std::vector<std::string>{
                           "torch_trace_rank0_pid2.3.summary.txt",
                           "torch_trace_rank0_pid2.5.summary.json",
                           "torch_trace_rank0_pid2.5.summary.txt",
                           "torch_trace_rank0_pid9.summary.json",
                           "torch_trace_rank1_pid3.summary.json",
                       }));
}

// Earlier versions wrote the summaries beside the trace: keep_last, which
// counts the traces of earlier runs in the folder too, removes them there.
TEST(TraceRetention, RemovesTheSummariesEarlierVersionsWroteBesideTheTrace) {
  TempDir dir;
  touch(dir, "torch_trace_rank0_pid1.json.gz", 30);
  touch(dir, "torch_trace_rank0_pid1.summary.txt", 30);
  touch(dir, "torch_trace_rank0_pid1.summary.json", 30);
  touch(dir, "torch_trace_step2_rank0_pid2.json", 20);
  touch(dir, "torch_trace_step2_rank0_pid2.summary.txt", 20);
  touch(dir, "torch_trace_rank0_pid2.5.pt.trace.json.gz", 10);
  touch(dir, "torch_trace_rank0_pid2.5.summary.txt", 10);
  touch(dir, "torch_trace_rank1_pid3.pt.trace.json.gz", 40);  // another rank
  touch(dir, "regiontrace_config_rank0.json", 50);            // not a trace
  const std::vector<std::string> removed = remove_old_traces(dir.path(), 0, 2);
  EXPECT_EQ(removed.size(), 3u);
  EXPECT_EQ(names(dir), (std::vector<std::string>{
                            "regiontrace_config_rank0.json",
                            "torch_trace_rank0_pid2.5.pt.trace.json.gz",
                            "torch_trace_rank0_pid2.5.summary.txt",
                            "torch_trace_rank1_pid3.pt.trace.json.gz",
                            "torch_trace_step2_rank0_pid2.json",
                            "torch_trace_step2_rank0_pid2.summary.txt",
                        }));
}

TEST(TraceRetention, ZeroKeepsEverything) {
  TempDir dir;
  touch(dir, "torch_trace_rank0_pid1.json.gz", 30);
  touch(dir, "torch_trace_rank0_pid2.json.gz", 20);
  EXPECT_TRUE(remove_old_traces(dir.path(), 0, 0).empty());
  EXPECT_EQ(names(dir).size(), 2u);
  EXPECT_EQ(remove_old_traces(dir.path(), 0, 1).size(), 1u);
  EXPECT_EQ(names(dir), (std::vector<std::string>{"torch_trace_rank0_pid2.json.gz"}));
}

}  // namespace
}  // namespace regiontrace::torch_profiler
