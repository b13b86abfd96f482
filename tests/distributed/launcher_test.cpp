// Four ranks started by real launchers, Open MPI's mpirun and torchrun, each
// running examples/rank_steps with the torch_profiler sink: every rank
// writes its own set of files, named with its rank and pid, nothing is
// overwritten, and each trace names its process after its rank. A missing
// launcher skips the test with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "rank_outputs.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

constexpr int kSteps = 3;

std::string common_env(const std::string& out) {
  return "REGIONTRACE_SINKS=torch_profiler REGIONTRACE_OUTPUT_DIR=" + shell_quote(out) +
         " REGIONTRACE_LOG_LEVEL=info ";
}

std::string program_args() {
  return shell_quote(rank_steps_program()) + " --steps " + std::to_string(kSteps) +
         " --work-us 500";
}

// Root in a container: Open MPI refuses root without the flag, and its
// shared-memory transport cannot use CMA (process_vm_readv) there. Four
// ranks on two cores need --oversubscribe. -x passes our variables to the
// ranks explicitly (on other nodes the environment is not inherited).
std::string mpirun(const std::string& out, const std::string& extra_env = "") {
  return common_env(out) + extra_env +
         "OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 90 mpirun --allow-run-as-root "
         "--oversubscribe --bind-to none --mca btl self,vader -np 4 -x REGIONTRACE_SINKS -x "
         "REGIONTRACE_OUTPUT_DIR -x REGIONTRACE_LOG_LEVEL " +
         (extra_env.empty() ? std::string() : "-x REGIONTRACE_CONFIG ") + program_args();
}

std::string why_no_mpirun() {
  if (run_command("command -v mpirun").exit_code != 0) {
    return "mpirun not found (Debian: apt-get install openmpi-bin; scripts/install_deps.sh "
           "installs it)";
  }
  return {};
}

// `-r 1 -t 2` spell torchrun's redirect and tee options as numbers, which
// every 2.x accepts. --standalone picks a free port and a run id, so two
// runs at once do not meet.
std::string torchrun(const std::string& out) {
  return common_env(out) + "timeout 90 " + shell_quote(REGIONTRACE_TEST_PYTHON) +
         " -m torch.distributed.run --standalone " + "--nproc_per_node 4 -r 1 -t 2 --log_dir " +
         shell_quote(out + "_logs") + " --no_python " + program_args();
}

std::string why_no_torchrun() {
  const std::string python = REGIONTRACE_TEST_PYTHON;
  if (python.empty())
    return "torchrun not found: this build has no Python package (no interpreter)";
  if (run_command(shell_quote(python) + " -c 'import torch.distributed.run'").exit_code != 0) {
    return "torchrun not found: " + python +
           " cannot import torch.distributed.run (bash scripts/install_deps.sh installs torch)";
  }
  return {};
}

class Launchers : public ::testing::Test {
 protected:
  std::string out() const { return dir_.path() + "/out"; }
  CleanEnv env_;
  TempDir dir_;
};

TEST_F(Launchers, MpirunFourRanksWriteOneSetEachNamedByRank) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = missing_builtin_sink("torch_profiler"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const CommandResult run = run_command(mpirun(out()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(run.output.find("rank " + std::to_string(r) + ": 3 steps"), std::string::npos)
        << run.output;
    // The core says where each rank came from.
    EXPECT_NE(run.output.find("(rank " + std::to_string(r) + ")"), std::string::npos) << run.output;
  }
  Expectation e;
  e.ranks = {0, 1, 2, 3};
  e.steps = kSteps;
  const RunOutputs outputs = collect_outputs(out());
  const std::vector<std::string> problems = problems_with(outputs, e);
  EXPECT_TRUE(problems.empty()) << lines(problems) << run.output;
  // One job: Open MPI's job id on every rank.
  const std::set<std::string> ids = job_ids(outputs);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_NE(*ids.begin(), "local");
}

TEST_F(Launchers, MpirunWithRanksZeroAndThreeWritesOnlyThere) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = missing_builtin_sink("torch_profiler"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string profile = dir_.file("ranks.yaml");
  write_file(profile, "ranks: [0, 3]\n");
  const CommandResult run =
      run_command(mpirun(out(), "REGIONTRACE_CONFIG=" + shell_quote(profile) + " "));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Expectation e;
  e.ranks = {0, 3};
  e.steps = kSteps;
  const std::vector<std::string> problems = problems_with(collect_outputs(out()), e);
  EXPECT_TRUE(problems.empty()) << lines(problems) << run.output;
  // Ranks 1 and 2 say why they start nothing.
  for (const char* r : {"1", "2"}) {
    EXPECT_NE(run.output.find(std::string("rank ") + r +
                              " (OMPI_COMM_WORLD_RANK) starts no sink that is limited to other "
                              "ranks: `torch_profiler` runs on 0, 3 (`ranks` (" +
                              profile + ":1))"),
              std::string::npos)
        << run.output;
  }
}

// Ranks 2 and 3 run as if their host's wall clock were 5 s ahead (Open
// MPI's MPMD form: one command line per group of ranks). Each rank's pairs
// carry its own clock, and one job's ranks share `${job_id}`'s folder.
TEST_F(Launchers, MpirunRanksRecordTheirOwnWallClock) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const long long shift = 5000000000LL;
  const std::string per_group = " -np 2 env REGIONTRACE_TEST_CLOCK_SHIFT_NS=";
  const std::string command =
      "REGIONTRACE_SINKS=recorder REGIONTRACE_PLUGIN_PATH=" + shell_quote(test_plugin_dir()) +
      " REGIONTRACE_OUTPUT_DIR=" + shell_quote(out() + "/job_${job_id}") +
      " OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 90 mpirun --allow-run-as-root "
      "--oversubscribe --bind-to none --mca btl self,vader -x REGIONTRACE_SINKS -x "
      "REGIONTRACE_PLUGIN_PATH -x REGIONTRACE_OUTPUT_DIR" +
      per_group + "0 " + program_args() + " :" + per_group + std::to_string(shift) + " " +
      program_args();
  const CommandResult run = run_command(command);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::vector<std::string> jobs = list_files(out());
  ASSERT_EQ(jobs.size(), 1u) << run.output;  // one folder: the job's
  const RunOutputs outputs = collect_outputs(jobs[0]);
  Expectation e;
  e.ranks = {0, 1, 2, 3};
  const std::vector<std::string> problems = problems_with(outputs, e);
  EXPECT_TRUE(problems.empty()) << lines(problems) << run.output;
  EXPECT_EQ(jobs[0], out() + "/job_" + *job_ids(outputs).begin());

  // realtime - monotonic: the host's offset, the same for every process on
  // it but for the shift (and NTP slewing it by microseconds meanwhile).
  std::map<int, long long> offset;
  for (const auto& [rank, sets] : outputs.by_rank) {
    for (const std::string& f : sets.front().files) {
      if (f.find("regiontrace_config_rank") == std::string::npos) continue;
      const nlohmann::json start = read_json(f)["clockSync"]["start"];
      offset[rank] = start["realtime_ns"].get<long long>() - start["monotonic_ns"].get<long long>();
    }
  }
  ASSERT_EQ(offset.size(), 4u);
  const long long tolerance = 100000000;  // 100 ms: far above slewing, far below the shift
  EXPECT_LT(std::llabs(offset[1] - offset[0]), tolerance);
  EXPECT_LT(std::llabs(offset[3] - offset[2]), tolerance);
  EXPECT_LT(std::llabs(offset[2] - offset[0] - shift), tolerance);
}

TEST_F(Launchers, TorchrunFourRanksWriteOneSetEachNamedByRank) {
  if (const std::string why = why_no_torchrun(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = missing_builtin_sink("torch_profiler"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const CommandResult run = run_command(torchrun(out()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Expectation e;
  e.ranks = {0, 1, 2, 3};
  e.steps = kSteps;
  const RunOutputs outputs = collect_outputs(out());
  const std::vector<std::string> problems = problems_with(outputs, e);
  EXPECT_TRUE(problems.empty()) << lines(problems) << run.output;
  // One job: torchrun's run id (random with --standalone) on every rank.
  const std::set<std::string> ids = job_ids(outputs);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.begin()->size(), 36u) << *ids.begin();  // a UUID
}

}  // namespace
}  // namespace regiontrace::test
