// Ranks as a launcher's environment gives them, without the launcher: the
// Slurm variables, a rank filter deciding which sinks start on RANK=1, 2, 3,
// and the clock pairs in the per-rank configuration file (shifted by
// REGIONTRACE_TEST_CLOCK_SHIFT_NS as on a host whose clock is off).
#include <gtest/gtest.h>
#include <time.h>

#include <filesystem>

#include "rank_outputs.hpp"
#include "remove_tree.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;

long long read_clock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::vector<nlohmann::json> recorded(const std::string& path, const std::string& event) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& j : read_jsonl(path)) {
    if (j.value("event", "") == event) out.push_back(j);
  }
  return out;
}

class RankEnvironment : public ::testing::Test {
 protected:
  // The program with the test sinks on the plugin path, REGIONTRACE_LOG_LEVEL
  // info, and `env` ("A=1 B=2 ").
  CommandResult run(const std::string& env, int steps = 3) {
    return run_command("env REGIONTRACE_PLUGIN_PATH=" + shell_quote(test_plugin_dir()) +
                       " REGIONTRACE_LOG_LEVEL=info " + env + shell_quote(rank_steps_program()) +
                       " --steps " + std::to_string(steps) + " --work-us 100");
  }
  std::string out() const { return dir_.path() + "/out"; }
  CleanEnv env_;
  TempDir dir_;
};

TEST_F(RankEnvironment, SlurmVariablesNameTheRankAndFillPlaceholders) {
  const CommandResult r =
      run("SLURM_PROCID=2 SLURM_LOCALID=1 SLURM_NTASKS=4 SLURM_JOB_ID=4242 "
          "REGIONTRACE_SINKS=recorder REGIONTRACE_OUTPUT_DIR=" +
          shell_quote(out() + "/job_${job_id}/node_${local_rank}_of_${world_size}") + " ");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("running sinks: recorder (rank 2)"), std::string::npos) << r.output;
  const std::string dir = out() + "/job_4242/node_1_of_4";
  const RunOutputs outputs = collect_outputs(dir);
  ASSERT_EQ(outputs.by_rank.size(), 1u) << r.output;
  ASSERT_EQ(outputs.by_rank.count(2), 1u);
  ASSERT_EQ(outputs.by_rank.at(2).size(), 1u);
  const RankFiles& files = outputs.by_rank.at(2).front();
  ASSERT_EQ(files.files.size(), 2u) << lines(files.files);
  const std::string pid = std::to_string(files.pid);

  const nlohmann::json config =
      read_json(dir + "/regiontrace_config/regiontrace_config_rank2_pid" + pid + ".json");
  EXPECT_EQ(config["rank"], 2);
  EXPECT_EQ(config["local_rank"], 1);
  EXPECT_EQ(config["world_size"], 4);
  EXPECT_EQ(config["job_id"], "4242");

  const std::string rec = dir + "/recorder_rank2_pid" + pid + ".jsonl";
  ASSERT_EQ(recorded(rec, "start").size(), 1u);
  EXPECT_EQ(recorded(rec, "start")[0]["rank"], 2);
  EXPECT_EQ(recorded(rec, "step").size(), 3u);
  // The example's alignment point: one mark after every step.
  const std::vector<nlohmann::json> marks = recorded(rec, "mark");
  ASSERT_EQ(marks.size(), 3u);
  for (std::size_t i = 0; i < marks.size(); ++i) {
    EXPECT_EQ(marks[i]["name"], "step_barrier");
    EXPECT_EQ(marks[i]["step"], static_cast<int>(i));
  }
}

// ranks: [0, 3] for every sink; recorder2 runs on its own ranks, 1 and 3.
TEST_F(RankEnvironment, RankFilterDecidesWhichSinksStart) {
  const std::string profile = dir_.file("ranks.yaml");
  write_file(profile,
             "output_dir: " + out() +
                 "\nranks: [0, 3]\nsinks:\n  recorder: {}\n  recorder2:\n    ranks: \"1-3:2\"\n"
                 "    file: \"${output_dir}/second_rank${rank}_pid${pid}.jsonl\"\n");
  const std::map<int, std::vector<std::string>> started = {
      {1, {"second"}}, {2, {}}, {3, {"recorder", "second"}}};
  for (const auto& [rank, stems] : started) {
    test::remove_tree(out());
    const CommandResult r = run("RANK=" + std::to_string(rank) +
                                " WORLD_SIZE=4 REGIONTRACE_CONFIG=" + shell_quote(profile) + " ");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const RunOutputs outputs = collect_outputs(out());
    std::vector<std::string> got;
    for (const auto& [file_rank, sets] : outputs.by_rank) {
      EXPECT_EQ(file_rank, rank);
      for (const RankFiles& set : sets) {
        for (const std::string& f : set.files) {
          const std::string name = fs::path(f).filename().string();
          if (name.rfind("regiontrace_config", 0) == 0) continue;
          got.push_back(name.substr(0, name.find("_rank")));
          // A sink that started saw the whole run.
          EXPECT_EQ(recorded(f, "mark").size(), 3u) << f;
        }
      }
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, stems) << "RANK=" << rank << "\n" << r.output;
    // A rank that starts no sink writes nothing at all, not even its config.
    EXPECT_EQ(fs::exists(out()), !stems.empty()) << "RANK=" << rank;
    const std::string skipped =
        rank == 1 ? "`recorder` runs on 0, 3 (`ranks` (" + profile + ":2))"
        : rank == 2
            ? "`recorder` runs on 0, 3 (`ranks` (" + profile +
                  ":2)); `recorder2` runs on 1, 3 (`sinks.recorder2.ranks` (" + profile + ":6))"
            : "";
    if (!skipped.empty()) {
      EXPECT_NE(r.output.find("rank " + std::to_string(rank) +
                              " (RANK) starts no sink that is limited to other ranks: " + skipped),
                std::string::npos)
          << r.output;
    } else {
      EXPECT_EQ(r.output.find("starts no sink"), std::string::npos) << r.output;
    }
  }
}

// A rank the job does not have is most likely a typo: rank 0 says so, once;
// without a launcher (no job size known) nothing is said.
TEST_F(RankEnvironment, RanksOutsideTheJobAreWarnedAbout) {
  const std::string profile = dir_.file("ranks.yaml");
  write_file(profile, "output_dir: " + out() + "\nranks: [0, 8]\nsinks:\n  recorder: {}\n");
  const std::string warning = "warning: sink `recorder`: `ranks` (" + profile +
                              ":2) names rank 8, outside this job of 4 ranks (0-3)";
  const CommandResult zero =
      run("RANK=0 WORLD_SIZE=4 REGIONTRACE_CONFIG=" + shell_quote(profile) + " ");
  ASSERT_EQ(zero.exit_code, 0) << zero.output;
  EXPECT_NE(zero.output.find(warning), std::string::npos) << zero.output;
  const CommandResult one =
      run("RANK=1 WORLD_SIZE=4 REGIONTRACE_CONFIG=" + shell_quote(profile) + " ");
  EXPECT_EQ(one.output.find("outside this job"), std::string::npos) << one.output;
  const CommandResult alone = run("REGIONTRACE_CONFIG=" + shell_quote(profile) + " ");
  EXPECT_EQ(alone.output.find("outside this job"), std::string::npos) << alone.output;
}

// The pair is read at start and at shutdown, inside the run: both clocks of
// each pair fall between readings taken before and after the program; the
// test shift moves only the wall clock.
TEST_F(RankEnvironment, ConfigFileCarriesClockPairsThatTheTestShiftMoves) {
  for (const long long shift : {0LL, -3600000000000LL, 5000000000LL}) {
    test::remove_tree(out());
    const long long real_before = read_clock(CLOCK_REALTIME);
    const long long mono_before = read_clock(CLOCK_MONOTONIC);
    const CommandResult r =
        run("RANK=1 WORLD_SIZE=2 REGIONTRACE_SINKS=recorder "
            "REGIONTRACE_TEST_CLOCK_SHIFT_NS=" +
            std::to_string(shift) + " REGIONTRACE_OUTPUT_DIR=" + shell_quote(out()) + " ");
    const long long mono_after = read_clock(CLOCK_MONOTONIC);
    const long long real_after = read_clock(CLOCK_REALTIME);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::vector<std::string> configs =
        list_files(out() + "/regiontrace_config", "regiontrace_config_rank1_pid");
    ASSERT_EQ(configs.size(), 1u) << r.output;
    const nlohmann::json sync = read_json(configs[0])["clockSync"];
    ASSERT_TRUE(sync["start"].is_object()) << sync.dump();
    ASSERT_TRUE(sync["end"].is_object()) << sync.dump();
    for (const char* which : {"start", "end"}) {
      const long long real = sync[which]["realtime_ns"].get<long long>() - shift;
      const long long mono = sync[which]["monotonic_ns"].get<long long>();
      EXPECT_GE(real, real_before) << which << " shift " << shift;
      EXPECT_LE(real, real_after) << which << " shift " << shift;
      EXPECT_GE(mono, mono_before) << which;
      EXPECT_LE(mono, mono_after) << which;
    }
    EXPECT_LE(sync["start"]["monotonic_ns"].get<long long>(),
              sync["end"]["monotonic_ns"].get<long long>());
  }
}

}  // namespace
}  // namespace regiontrace::test
