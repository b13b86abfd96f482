// `regiontrace check`: exit codes and what it prints, on good and bad input,
// and every shipped profile passes it.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

// Runs the CLI in `dir` with a clean environment plus `vars`.
CommandResult regiontrace(const std::string& args, const std::string& dir,
                          const std::string& vars = "") {
  return run_command("cd " + dir + " && env -u REGIONTRACE_CONFIG -u REGIONTRACE_SINKS " + vars +
                     " REGIONTRACE_PLUGIN_PATH=" REGIONTRACE_TEST_PLUGIN_DIR_FOR_CLI
                     " " REGIONTRACE_CLI " " +
                     args);
}

TEST(CheckCommand, ValidProfilePrintsValuesSourcesSinksAndRegions) {
  TempDir dir;
  write_file(dir.file("p.yaml"),
             "output_dir: " + dir.file("out") +
                 "\nsinks:\n  recorder:\n    regions: [model_loading, \"blocks.*\"]\n"
                 "  recorder2:\n    enabled: false\n");
  const auto r = regiontrace("check p.yaml", dir.path(), "REGIONTRACE_RECORDER_TENSORS=1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("configuration is valid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<- p.yaml:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<- p.yaml:4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sinks.recorder.tensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<- env REGIONTRACE_RECORDER_TENSORS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("recorder: runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("regions: profiler_region_model_loading"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("recorder2: off"), std::string::npos) << r.output;
  // check never creates the output folders.
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(CheckCommand, InvalidProfileListsEveryErrorAndExitsOne) {
  TempDir dir;
  write_file(dir.file("bad.yaml"),
             "log_level: chatty\nsinks:\n  recorder:\n    tensor: true\n    regions: [nope]\n"
             "  recordr: {}\n");
  const auto r = regiontrace("check bad.yaml", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("`log_level` (bad.yaml:1): `chatty` is not one of"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("unknown key `sinks.recorder.tensor` (bad.yaml:4) (did you mean "
                          "`tensors`?)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("unknown sink `recordr`"), std::string::npos) << r.output;
}

// Sink keys are flat: `prometheus: {listen: ...}` is pointed at the key it
// meant, and a bare prefix at the keys it begins.
TEST(CheckCommand, NestedKeysArePointedAtTheirFlatName) {
  if (!std::filesystem::exists(builtin_plugin_dir() + "/regiontrace_sink_region_stats.so")) {
    GTEST_SKIP() << "the region_stats sink is not built";
  }
  TempDir dir;
  write_file(dir.file("p.yaml"), "sinks:\n  region_stats:\n    prometheus: {listen: \":9400\"}\n");
  auto r = regiontrace("check p.yaml", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown key `sinks.region_stats.prometheus` (p.yaml:3) (did you mean "
                          "`prometheus_listen`? these keys are flat, not nested under "
                          "`prometheus`)"),
            std::string::npos)
      << r.output;
  write_file(dir.file("p.yaml"), "sinks:\n  region_stats:\n    prometheus: true\n");
  r = regiontrace("check p.yaml", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("(did you mean `prometheus_listen` or `prometheus_textfile` or "
                          "`prometheus_textfile_interval_s` or `prometheus_buckets`?)"),
            std::string::npos)
      << r.output;
}

// Issue 13: `max_trace_mb: nan` was accepted (strtod reads nan and inf).
TEST(CheckCommand, NonFiniteNumbersAreNotNumbers) {
  if (!std::filesystem::exists(builtin_plugin_dir() + "/regiontrace_sink_torch_profiler.so")) {
    GTEST_SKIP() << "the torch_profiler sink (the one real-valued key) is not built";
  }
  for (const std::string value : {"nan", "inf", "-inf", ".nan"}) {
    TempDir dir;
    write_file(dir.file("p.yaml"), "sinks:\n  torch_profiler:\n    max_trace_mb: " + value + "\n");
    const auto r = regiontrace("check p.yaml", dir.path());
    EXPECT_EQ(r.exit_code, 1) << value << ": " << r.output;
    EXPECT_NE(r.output.find("`sinks.torch_profiler.max_trace_mb` (p.yaml:3): `" + value +
                            "` is not a number"),
              std::string::npos)
        << r.output;
  }
}

// Issue 13: check passed a regex, a colour and an output path that the sinks
// then refused at start-up; the sinks' own checks now run in check too.
TEST(CheckCommand, ValuesTheSinksWouldRefuseAreRefusedByCheck) {
  struct Case {
    std::string sink;
    std::string yaml;  // under sinks.<sink>:
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"activation_trace", "    layers: \"(a)\\\\1\"\n",
       "`sinks.activation_trace.layers` (p.yaml:3): invalid escape sequence"},
      {"activation_trace", "    op_filter: \"aten::(?=mm)\"\n",
       "`sinks.activation_trace.op_filter` (p.yaml:3):"},
      {"activation_trace", "    output: FOLDER\n",
       "`sinks.activation_trace.output` (p.yaml:3): `FOLDER` is a folder"},
      {"nvtx", "    colors: [\"blocks.*=#12345\"]\n", "`sinks.nvtx.colors` (p.yaml:3):"},
  };
  for (const Case& c : cases) {
    if (!std::filesystem::exists(builtin_plugin_dir() + "/regiontrace_sink_" + c.sink + ".so")) {
      continue;
    }
    TempDir dir;
    std::string yaml = c.yaml;
    std::string expected = c.expected;
    const std::string folder = dir.path();
    for (std::string* s : {&yaml, &expected}) {
      const auto at = s->find("FOLDER");
      if (at != std::string::npos) s->replace(at, 6, folder);
    }
    write_file(dir.file("p.yaml"), "sinks:\n  " + c.sink + ":\n" + yaml);
    const auto r = regiontrace("check p.yaml", dir.path());
    EXPECT_EQ(r.exit_code, 1) << yaml << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << yaml << r.output;
  }
  TempDir dir;  // the same keys with usable values pass
  write_file(dir.file("p.yaml"),
             "sinks:\n  activation_trace:\n    layers: \"blocks\\\\.(0|1)\\\\b\"\n"
             "    output: " +
                 dir.file("a.jsonl") + "\n");
  const auto ok = regiontrace("check p.yaml", dir.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(CheckCommand, RegionFilterThatSelectsNothingIsInvalid) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "sinks:\n  recorder:\n    regions: [traning_step]\n");
  const auto r = regiontrace("check p.yaml", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown region `traning_step`"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("selects nothing"), std::string::npos) << r.output;
}

TEST(CheckCommand, ARegionOfYourOwnIsKeptByItsExactName) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "sinks:\n  recorder:\n    regions: [scheduler_step]\n");
  const auto r = regiontrace("check p.yaml", dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("unknown region"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("selected when the program first enters them: scheduler_step"),
            std::string::npos)
      << r.output;
}

TEST(CheckCommand, EnvironmentAloneIsChecked) {
  TempDir dir;
  const auto r = regiontrace("check", dir.path(), "FASTVIDEO_TORCH_PROFILER_DIR=relative/dir");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FASTVIDEO_TORCH_PROFILER_DIR=`relative/dir`: must be an absolute"),
            std::string::npos)
      << r.output;
}

TEST(CheckCommand, JsonOutputParses) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "output_dir: /tmp/x\nsinks:\n  recorder: {}\n");
  const auto r = regiontrace("check --json p.yaml", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["values"]["output_dir"]["value"], "/tmp/x");
  EXPECT_EQ(j["sinks"][0], "recorder");
}

TEST(CheckCommand, UsageErrorsExitTwo) {
  TempDir dir;
  EXPECT_EQ(regiontrace("check missing.yaml", dir.path()).exit_code, 2);
  EXPECT_EQ(regiontrace("check --no-such-flag", dir.path()).exit_code, 2);
  EXPECT_EQ(regiontrace("", dir.path()).exit_code, 2);
}

// A profile that cannot be read is a bad argument, as a missing one is,
// and a FIFO is refused before anything waits on it.
TEST(CheckCommand, AProfileThatCannotBeReadExitsTwoSayingWhy) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo.yaml").c_str(), 0600), 0);
  std::filesystem::create_directory(dir.file("folder.yaml"));
  const auto fifo = regiontrace("check fifo.yaml", dir.path());
  EXPECT_EQ(fifo.exit_code, 2) << fifo.output;
  EXPECT_NE(fifo.output.find("profile fifo.yaml: is not a regular file"), std::string::npos)
      << fifo.output;
  const auto folder = regiontrace("check folder.yaml", dir.path());
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_NE(folder.output.find("profile folder.yaml: is a folder"), std::string::npos)
      << folder.output;
  if (::geteuid() != 0) {  // root reads every file
    write_file(dir.file("secret.yaml"), "log_level: info\n");
    ::chmod(dir.file("secret.yaml").c_str(), 0);
    const auto secret = regiontrace("check secret.yaml", dir.path());
    EXPECT_EQ(secret.exit_code, 2) << secret.output;
    EXPECT_NE(secret.output.find("profile secret.yaml: cannot be read"), std::string::npos)
        << secret.output;
  }
}

TEST(CheckCommand, EveryShippedProfilePasses) {
  TempDir dir;
  const auto profiles = list_files(source_dir() + "/config/profiles");
  int checked = 0;
  for (const std::string& p : profiles) {
    if (p.size() < 5 || p.substr(p.size() - 5) != ".yaml") continue;
    const auto r = run_command(
        "cd " + dir.path() +
        " && env -u REGIONTRACE_CONFIG -u REGIONTRACE_SINKS " REGIONTRACE_CLI " check " + p);
    EXPECT_EQ(r.exit_code, 0) << p << "\n" << r.output;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no profiles shipped yet";
}

// A shipped profile by its bare name, from any folder, on the command line
// and in REGIONTRACE_CONFIG: the one beside this libregiontrace is read, and
// the output names its path. A file of that name in the working folder wins.
TEST(CheckCommand, AShippedProfileIsFoundByItsName) {
  TempDir dir;
  const auto by_name = regiontrace("check quickstart.yaml", dir.path());
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;
  EXPECT_NE(by_name.output.find("share/regiontrace/profiles/quickstart.yaml"), std::string::npos)
      << by_name.output;
  const auto from_env = run_command(
      "cd " + dir.path() + " && env -u REGIONTRACE_SINKS REGIONTRACE_CONFIG=kernels.yaml " +
      REGIONTRACE_CLI " check");
  ASSERT_EQ(from_env.exit_code, 0) << from_env.output;
  EXPECT_NE(from_env.output.find("share/regiontrace/profiles/kernels.yaml"), std::string::npos)
      << from_env.output;

  write_file(dir.file("quickstart.yaml"), "log_level: debug\n");
  const auto local = regiontrace("check quickstart.yaml", dir.path());
  ASSERT_EQ(local.exit_code, 0) << local.output;
  EXPECT_NE(local.output.find("profiles: quickstart.yaml"), std::string::npos) << local.output;
  EXPECT_NE(local.output.find("<- quickstart.yaml:1"), std::string::npos) << local.output;

  // REGIONTRACE_CONFIG naming what cannot be read is unreadable input, as
  // an argument is (exit 2), whatever the reason.
  for (const std::string& bad :
       std::vector<std::string>{"quikstart.yaml", "/dev/zero", dir.path()}) {
    const auto r =
        run_command("cd " + dir.path() + " && env -u REGIONTRACE_SINKS REGIONTRACE_CONFIG=" + bad +
                    " " REGIONTRACE_CLI " check");
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("REGIONTRACE_CONFIG: profile " + bad + ": "), std::string::npos)
        << r.output;
  }
}

}  // namespace
}  // namespace regiontrace::test

namespace regiontrace::test {
namespace {

// docs/configuration.md is `regiontrace schema --markdown`: the sinks'
// schemas are the single source of the configuration reference.
TEST(SchemaCommand, ConfigurationReferenceMatchesTheSchemas) {
  for (const char* sink : {"torch_profiler", "nvtx", "activation_trace", "memory_snapshot"}) {
    if (!std::filesystem::exists(builtin_plugin_dir() + "/regiontrace_sink_" + sink + ".so")) {
      GTEST_SKIP() << "built-in sink " << sink << " not built here";
    }
  }
  const auto r =
      run_command("env -u REGIONTRACE_PLUGIN_PATH " REGIONTRACE_CLI " schema --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, read_file(source_dir() + "/docs/configuration.md"))
      << "regenerate: build/bin/regiontrace schema --markdown > docs/configuration.md";
}

// The commands people run to validate never run a plugin's code to find
// out that it must be refused: a file planted under a built-in's name, or
// one built against another ABI, is judged from the file. `schema` lists
// such a plugin as refused and exits 1, as docs/cli.md says.
TEST(SchemaCommand, CheckAndSchemaJudgeRefusedPluginsWithoutRunningThem) {
  if (!std::filesystem::exists(builtin_plugin_dir() + "/regiontrace_sink_timeline.so")) {
    GTEST_SKIP() << "built-in sink timeline not built here";
  }
  TempDir dir;
  const std::string mark = dir.file("constructors.txt");
  std::filesystem::create_directory(dir.file("planted"));
  std::filesystem::copy_file(REGIONTRACE_BAD_PLUGIN_DIR "/regiontrace_sink_not_a_plugin.so",
                             dir.file("planted/regiontrace_sink_timeline.so"));
  const std::string env = "env -u REGIONTRACE_CONFIG REGIONTRACE_TEST_CONSTRUCTOR_MARK=" + mark;
  const auto check = run_command(env + " REGIONTRACE_SINKS=timeline REGIONTRACE_PLUGIN_PATH=" +
                                 dir.file("planted") + " " REGIONTRACE_CLI " check");
  EXPECT_EQ(check.exit_code, 1) << check.output;
  EXPECT_NE(check.output.find("sink `timeline` is provided twice"), std::string::npos)
      << check.output;
  const auto schema = run_command(env + " REGIONTRACE_PLUGIN_PATH=" REGIONTRACE_BAD_PLUGIN_DIR
                                        "/regiontrace_sink_abi_999.so " REGIONTRACE_CLI " schema");
  EXPECT_EQ(schema.exit_code, 1) << schema.output;
  EXPECT_NE(schema.output.find("abi_999  " REGIONTRACE_BAD_PLUGIN_DIR
                               "/regiontrace_sink_abi_999.so  (refused)"),
            std::string::npos)
      << schema.output;
  EXPECT_NE(schema.output.find("ABI version 999"), std::string::npos) << schema.output;
  EXPECT_FALSE(std::filesystem::exists(mark)) << read_file(mark);
}

}  // namespace
}  // namespace regiontrace::test
