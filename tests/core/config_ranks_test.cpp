// Choosing ranks and naming outputs per rank: the top-level `ranks` (and
// REGIONTRACE_RANKS) pick the ranks sinks run on, a sink's own `ranks` wins;
// the launcher's variables give rank, local rank, size and job id, which
// `${...}` puts into paths; the per-rank configuration file carries the clock
// pairs that line ranks up.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "config/config_loader.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;
using detail::EffectiveConfig;
using detail::Environment;
using detail::RankInfo;

const detail::SinkSettings& sink(const EffectiveConfig& c, const std::string& name) {
  for (const auto& s : c.sinks) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no sink " + name);
}

const detail::EffectiveValue* value(const EffectiveConfig& c, const std::string& key) {
  for (const auto& v : c.values) {
    if (v.key == key) return &v;
  }
  return nullptr;
}

class ConfigRanks : public ::testing::Test {
 protected:
  Options options(const std::string& yaml) {
    const std::string path = dir_.file("profile.yaml");
    write_file(path, "output_dir: " + dir_.path() + "\n" + yaml);
    Options o;
    o.profiles = {path};
    o.set("plugins.paths", test_plugin_dir());
    return o;
  }
  std::string profile() const { return dir_.file("profile.yaml"); }
  std::string error_of(const Options& o, const Environment& env = {}) {
    try {
      detail::load_configuration(o, env);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  CleanEnv env_;
  TempDir dir_;
};

TEST_F(ConfigRanks, TopLevelRanksApplyToEverySinkThatHasNoneOfItsOwn) {
  const EffectiveConfig c = detail::load_configuration(
      options("ranks: [0, 3]\nsinks:\n  recorder: {}\n  recorder2:\n    ranks: \"1-7:2\"\n"), {});
  EXPECT_EQ(c.ranks, (std::vector<long long>{0, 3}));
  EXPECT_EQ(sink(c, "recorder").ranks, (std::vector<long long>{0, 3}));
  EXPECT_EQ(sink(c, "recorder").ranks_origin, "`ranks` (" + profile() + ":2)");
  EXPECT_EQ(sink(c, "recorder2").ranks, (std::vector<long long>{1, 3, 5, 7}));
  EXPECT_EQ(sink(c, "recorder2").ranks_origin, "`sinks.recorder2.ranks` (" + profile() + ":6)");
  // What the sink is told, and what check and the configuration file show,
  // match what the host applies.
  EXPECT_EQ(sink(c, "recorder").values.at("ranks"), (std::vector<std::string>{"0", "3"}));
  ASSERT_NE(value(c, "sinks.recorder.ranks"), nullptr);
  EXPECT_EQ(value(c, "sinks.recorder.ranks")->items, (std::vector<std::string>{"0", "3"}));
  EXPECT_EQ(value(c, "sinks.recorder.ranks")->source, "`ranks` (" + profile() + ":2)");
  EXPECT_EQ(value(c, "sinks.recorder2.ranks")->source, profile() + ":6");
}

TEST_F(ConfigRanks, NoRanksMeansEveryRank) {
  const EffectiveConfig c = detail::load_configuration(options("sinks:\n  recorder: {}\n"), {});
  EXPECT_TRUE(c.ranks.empty());
  EXPECT_TRUE(sink(c, "recorder").ranks.empty());
  ASSERT_NE(value(c, "ranks"), nullptr);
  EXPECT_EQ(value(c, "ranks")->source, "default");
}

TEST_F(ConfigRanks, RangesWithStridesAndCommaLists) {
  const std::pair<std::string, std::vector<long long>> cases[] = {
      {"\"0-7:2\"", {0, 2, 4, 6}},
      {"\"0,4-5,8-12:4\"", {0, 4, 5, 8, 12}},
      {"[0, \"2-6:3\"]", {0, 2, 5}},
      {"\"5\"", {5}},
      {"[3, 1, 3]", {3, 1}},  // a rank named twice is one rank
      {"\"2-2\"", {2}},
      {"\"4-6:100\"", {4}},  // a stride past the end: the start alone
      {"\"9223372036854775800-9223372036854775807:5\"", {9223372036854775800, 9223372036854775805}},
  };
  for (const auto& [text, want] : cases) {
    const EffectiveConfig c =
        detail::load_configuration(options("ranks: " + text + "\nsinks:\n  recorder: {}\n"), {});
    EXPECT_EQ(c.ranks, want) << text;
  }
}

TEST_F(ConfigRanks, StepsTakeStridesToo) {
  const EffectiveConfig c =
      detail::load_configuration(options("sinks:\n  recorder:\n    steps: \"10-20:5\"\n"), {});
  EXPECT_EQ(sink(c, "recorder").steps, (std::vector<long long>{10, 15, 20}));
}

TEST_F(ConfigRanks, VariablesChooseRanksAndASinksOwnVariableWins) {
  const EffectiveConfig c = detail::load_configuration(
      options("ranks: [0]\nsinks:\n  recorder: {}\n  recorder2: {}\n"),
      {{"REGIONTRACE_RANKS", "1,4-6"}, {"REGIONTRACE_RECORDER2_RANKS", "2"}});
  EXPECT_EQ(c.ranks, (std::vector<long long>{1, 4, 5, 6}));
  ASSERT_NE(value(c, "ranks"), nullptr);
  EXPECT_EQ(value(c, "ranks")->source, "env REGIONTRACE_RANKS");
  EXPECT_EQ(sink(c, "recorder").ranks, (std::vector<long long>{1, 4, 5, 6}));
  EXPECT_EQ(sink(c, "recorder").ranks_origin, "`ranks` (env REGIONTRACE_RANKS)");
  EXPECT_EQ(sink(c, "recorder2").ranks, (std::vector<long long>{2}));
}

TEST_F(ConfigRanks, BadRanksNameFileKeyValueAndTheValidForms) {
  for (const std::string bad : {"0-7:0", "zero", "5-1", "0-7:x", "1-", "0-3:2:1"}) {
    const std::string msg = error_of(options("ranks: \"" + bad + "\"\nsinks:\n  recorder: {}\n"));
    EXPECT_NE(msg.find("`ranks` (" + profile() + ":2): "), std::string::npos) << bad << ": " << msg;
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
    EXPECT_NE(msg.find("valid items: 3, 2-5, 0-7:2"), std::string::npos) << msg;
  }
  const std::string stride = error_of(options("ranks: \"0-7:0\"\nsinks:\n  recorder: {}\n"));
  EXPECT_NE(stride.find("range `0-7:0` has a stride below 1"), std::string::npos) << stride;
  const std::string wide = error_of(
      options("ranks: \"-9223372036854775807-9223372036854775807\"\nsinks:\n  recorder: {}\n"));
  EXPECT_NE(wide.find("span at most 1000000 values"), std::string::npos) << wide;
  const std::string down = error_of(options("ranks: \"5-1\"\nsinks:\n  recorder: {}\n"));
  EXPECT_NE(down.find("range `5-1` must go upwards"), std::string::npos) << down;

  const std::string negative = error_of(options("sinks:\n  recorder:\n    ranks: [-1]\n"));
  EXPECT_NE(negative.find("`sinks.recorder.ranks` (" + profile() + ":4): -1 is not a rank"),
            std::string::npos)
      << negative;

  const std::string env =
      error_of(options("sinks:\n  recorder: {}\n"), {{"REGIONTRACE_RANKS", "0-x"}});
  EXPECT_NE(env.find("`ranks` (env REGIONTRACE_RANKS): `0-x` is not an integer or a range"),
            std::string::npos)
      << env;
}

// Outside the selection no sink is built, so regions take the disabled path
// (enabled() false: the one relaxed load and nothing else); inside, it runs.
TEST_F(ConfigRanks, ARankOutsideTheSelectionRunsWithSinksOff) {
  for (const auto& [rank, runs] : {std::pair<const char*, bool>{"2", false}, {"3", true}}) {
    const ChildResult child = run_in_child([&, rank = rank] {
      setenv("RANK", rank, 1);
      setenv("WORLD_SIZE", "4", 1);
      Options o = options("ranks: \"0-3:3\"\nsinks:\n  recorder: {}\n");
      o.set("sinks.recorder.file", dir_.file(std::string("rec_") + rank + ".jsonl"));
      init(o);
      const bool on = enabled();
      shutdown();
      return on ? 10 : 20;
    });
    ASSERT_TRUE(child.exited);
    EXPECT_EQ(child.exit_code, runs ? 10 : 20) << "RANK=" << rank;
    EXPECT_EQ(fs::exists(dir_.file(std::string("rec_") + rank + ".jsonl")), runs) << rank;
  }
}

TEST(RankInfo, TorchrunUnderSlurmTakesEveryNumberFromTorchrun) {
  const RankInfo r = detail::rank_from_environment({{"RANK", "5"},
                                                    {"WORLD_SIZE", "8"},
                                                    {"SLURM_PROCID", "1"},
                                                    {"SLURM_LOCALID", "1"},
                                                    {"SLURM_NTASKS", "2"},
                                                    {"SLURM_JOB_ID", "991"}});
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.source, "RANK");
  EXPECT_EQ(r.world_size, 8);
  // torchrun did not say (LOCAL_RANK unset): the next launcher that did.
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.job_id, "991");
  EXPECT_EQ(r.job_id_source, "SLURM_JOB_ID");
}

TEST(RankInfo, OpenMpi) {
  const RankInfo r = detail::rank_from_environment({{"OMPI_COMM_WORLD_RANK", "3"},
                                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                    {"OMPI_COMM_WORLD_SIZE", "4"},
                                                    {"PMIX_RANK", "3"},
                                                    {"OMPI_MCA_ess_base_jobid", "507707393"}});
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.source, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.job_id, "507707393");
}

TEST(RankInfo, SlurmAlone) {
  const RankInfo r = detail::rank_from_environment({{"SLURM_PROCID", "6"},
                                                    {"SLURM_LOCALID", "2"},
                                                    {"SLURM_NTASKS", "8"},
                                                    {"SLURM_JOB_ID", "77"}});
  EXPECT_EQ(r.rank, 6);
  EXPECT_EQ(r.source, "SLURM_PROCID");
  EXPECT_EQ(r.local_rank, 2);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.job_id, "77");
}

TEST(RankInfo, NoLauncherIsRankZeroOfOne) {
  const RankInfo r = detail::rank_from_environment({{"RANK", "not a number"}});
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.source, "default");
  EXPECT_EQ(r.world_size, 1);
  EXPECT_EQ(r.job_id, "local");
}

TEST(RankInfo, TorchrunWithoutRunIdHasNoJobId) {
  EXPECT_EQ(detail::rank_from_environment({{"RANK", "0"}, {"TORCHELASTIC_RUN_ID", "none"}}).job_id,
            "local");
  EXPECT_EQ(detail::rank_from_environment({{"RANK", "0"}, {"TORCHELASTIC_RUN_ID", "r7"}}).job_id,
            "r7");
}

TEST_F(ConfigRanks, LauncherPlaceholdersExpandInPaths) {
  Options o = options("sinks:\n  recorder:\n    file: \"${output_dir}/rec_${rank}.jsonl\"\n");
  o.set("output_dir", dir_.path() + "/job_${job_id}/r${rank}_l${local_rank}_of${world_size}");
  const EffectiveConfig c = detail::load_configuration(o, {{"SLURM_PROCID", "2"},
                                                           {"SLURM_LOCALID", "1"},
                                                           {"SLURM_NTASKS", "4"},
                                                           {"SLURM_JOB_ID", "4242"}});
  const std::string dir = dir_.path() + "/job_4242/r2_l1_of4";
  EXPECT_EQ(c.output_dir, dir);
  EXPECT_EQ(sink(c, "recorder").values.at("file"),
            (std::vector<std::string>{dir + "/rec_2.jsonl"}));

  o.set("output_dir", dir_.path() + "/${jobid}");
  const std::string msg = error_of(o);
  EXPECT_NE(msg.find("unknown placeholder `${jobid}` (valid: ${rank}, ${local_rank}, "
                     "${world_size}, ${job_id}, ${pid}, ${env:NAME})"),
            std::string::npos)
      << msg;
}

TEST(EffectiveConfigJson, CarriesTheJobAndTheClockPairsOnceStarted) {
  EffectiveConfig c;
  c.rank.rank = 2;
  c.rank.job_id = "4242";
  nlohmann::json j = nlohmann::json::parse(detail::effective_config_json(c));
  EXPECT_EQ(j["job_id"], "4242");
  EXPECT_FALSE(j.contains("clockSync"));  // regiontrace check: nothing started

  c.clock_start = sdk::clock_sync::Pair{1700000000123456789, 5000};
  j = nlohmann::json::parse(detail::effective_config_json(c));
  EXPECT_EQ(j["clockSync"]["start"]["realtime_ns"].get<std::int64_t>(), 1700000000123456789);
  EXPECT_EQ(j["clockSync"]["start"]["monotonic_ns"].get<std::int64_t>(), 5000);
  EXPECT_TRUE(j["clockSync"]["end"].is_null());  // still running

  c.clock_end = sdk::clock_sync::Pair{1700000001123456789, 1000005000};
  j = nlohmann::json::parse(detail::effective_config_json(c));
  EXPECT_EQ(j["clockSync"]["end"]["realtime_ns"].get<std::int64_t>(), 1700000001123456789);
  EXPECT_EQ(j["clockSync"]["end"]["monotonic_ns"].get<std::int64_t>(), 1000005000);
}

}  // namespace
}  // namespace regiontrace::test
