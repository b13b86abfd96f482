// The configuration layers and their precedence: defaults < profiles (later
// wins, includes first) < environment < program; the seed's variables.
#include <gtest/gtest.h>
#include <unistd.h>

#include "config/config_loader.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

using detail::ConfigTree;
using detail::Environment;

std::string value(const ConfigTree& t, const std::string& key) {
  const ConfigTree::Node* n = t.find(key);
  return n == nullptr ? "<unset>" : n->data();
}

std::vector<std::string> items(const ConfigTree& t, const std::string& key) {
  const ConfigTree::Node* n = t.find(key);
  return n == nullptr ? std::vector<std::string>{} : ConfigTree::items(*n);
}

ConfigTree tree(const Options& o, const Environment& env,
                std::vector<std::string> sinks = {"torch_profiler", "nvtx", "activation_trace"}) {
  std::vector<std::string> errors;
  ConfigTree t = detail::build_config_tree(o, env, sinks, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return t;
}

TEST(ConfigLayers, LaterProfilesWinAndIncludesComeFirst) {
  TempDir dir;
  write_file(dir.file("base.yaml"),
             "output_dir: /base\nsinks:\n  nvtx:\n    domain: base\n    prefix: base\n");
  write_file(dir.file("exp.yaml"), "include: base.yaml\nsinks:\n  nvtx:\n    domain: exp\n");
  write_file(dir.file("last.yaml"), "output_dir: /last\n");
  Options o;
  o.profiles = {dir.file("exp.yaml"), dir.file("last.yaml")};
  const ConfigTree t = tree(o, {});
  EXPECT_EQ(value(t, "sinks.nvtx.domain"), "exp");
  EXPECT_EQ(value(t, "sinks.nvtx.prefix"), "base");
  EXPECT_EQ(value(t, "output_dir"), "/last");
  EXPECT_EQ(t.source("sinks.nvtx.domain"), dir.file("exp.yaml") + ":4");
  EXPECT_EQ(t.source("sinks.nvtx.prefix"), dir.file("base.yaml") + ":5");
}

TEST(ConfigLayers, EnvironmentBeatsProfilesAndProgramBeatsEnvironment) {
  TempDir dir;
  write_file(dir.file("p.yaml"),
             "output_dir: /from_file\nregions: [a]\nsinks:\n  nvtx:\n    domain: file\n");
  Options o;
  o.profiles = {dir.file("p.yaml")};
  o.set("sinks.nvtx.domain", "program");
  const Environment env = {{"REGIONTRACE_OUTPUT_DIR", "/from_env"},
                           {"REGIONTRACE_REGIONS", "x, y"},
                           {"REGIONTRACE_NVTX_DOMAIN", "env"}};
  const ConfigTree t = tree(o, env);
  EXPECT_EQ(value(t, "output_dir"), "/from_env");
  EXPECT_EQ(t.source("output_dir"), "env REGIONTRACE_OUTPUT_DIR");
  EXPECT_EQ(items(t, "regions"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(value(t, "sinks.nvtx.domain"), "program");
  EXPECT_EQ(t.source("sinks.nvtx.domain"), "program");
}

TEST(ConfigLayers, RegiontraceConfigListsProfiles) {
  TempDir dir;
  write_file(dir.file("a.yaml"), "log_level: debug\noutput_dir: /a\n");
  write_file(dir.file("b.yaml"), "output_dir: /b\n");
  const ConfigTree t =
      tree({}, {{"REGIONTRACE_CONFIG", dir.file("a.yaml") + ":" + dir.file("b.yaml")}});
  EXPECT_EQ(value(t, "output_dir"), "/b");
  EXPECT_EQ(value(t, "log_level"), "debug");
}

TEST(ConfigLayers, SinksVariableNamesExactlyTheSinksThatRun) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "sinks:\n  nvtx: {}\n  torch_profiler:\n    with_stack: true\n");
  Options o;
  o.profiles = {dir.file("p.yaml")};
  const ConfigTree t = tree(o, {{"REGIONTRACE_SINKS", "nvtx,activation_trace"}});
  EXPECT_EQ(value(t, "sinks.nvtx.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.activation_trace.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.torch_profiler.enabled"), "false");
  EXPECT_EQ(value(t, "sinks.torch_profiler.with_stack"), "true");  // kept, just off
}

TEST(ConfigLayers, AVariableForASinkNotInTheListDoesNotTurnItOn) {
  // Issue 13: REGIONTRACE_SINKS=activation_trace with a memory setting ran
  // memory_snapshot too.
  const ConfigTree t = tree({}, {{"REGIONTRACE_SINKS", "activation_trace"},
                                 {"REGIONTRACE_NVTX_DOMAIN", "mine"},
                                 {"REGIONTRACE_ACTIVATION_TRACE_OPS", "true"}});
  EXPECT_EQ(value(t, "sinks.activation_trace.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.activation_trace.ops"), "true");
  EXPECT_EQ(value(t, "sinks.nvtx.domain"), "mine");  // kept, for the record
  EXPECT_EQ(value(t, "sinks.nvtx.enabled"), "false");
  EXPECT_NE(t.source("sinks.nvtx.enabled").find("REGIONTRACE_NVTX_DOMAIN"), std::string::npos);

  // A profile's sinks are a list too; without any list a variable still
  // turns its sink on, and `_ENABLED` always can.
  TempDir dir;
  write_file(dir.file("p.yaml"), "sinks:\n  torch_profiler: {}\n");
  Options o;
  o.profiles = {dir.file("p.yaml")};
  EXPECT_EQ(value(tree(o, {{"REGIONTRACE_NVTX_DOMAIN", "x"}}), "sinks.nvtx.enabled"), "false");
  EXPECT_EQ(value(tree({}, {{"REGIONTRACE_NVTX_DOMAIN", "x"}}), "sinks.nvtx.enabled"), "<unset>");
  EXPECT_EQ(value(tree(o, {{"REGIONTRACE_NVTX_ENABLED", "true"}}), "sinks.nvtx.enabled"), "true");
}

TEST(ConfigLayers, SinkVariablesTakeTheLongestSinkName) {
  const ConfigTree t =
      tree({}, {{"REGIONTRACE_TORCH_PROFILER_RECORD_SHAPES", "1"}}, {"torch", "torch_profiler"});
  EXPECT_EQ(value(t, "sinks.torch_profiler.record_shapes"), "1");
  EXPECT_FALSE(t.has("sinks.torch"));
}

TEST(ConfigLayers, UnknownRegiontraceVariableIsAnError) {
  std::vector<std::string> errors;
  detail::build_config_tree({}, {{"REGIONTRACE_OUTPUT_DIRS", "/x"}}, {"nvtx"}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("REGIONTRACE_OUTPUT_DIRS"), std::string::npos);
  EXPECT_NE(errors[0].find("did you mean `REGIONTRACE_OUTPUT_DIR`"), std::string::npos)
      << errors[0];
}

// The project's scripts read these; users export them as the scripts'
// docs say (scripts/gpu_check.sh), and no program may refuse to start then.
TEST(ConfigLayers, TheScriptsVariablesAreNoConfigurationAndNoError) {
  std::vector<std::string> errors;
  const ConfigTree t =
      detail::build_config_tree({},
                                {{"REGIONTRACE_PYTHON", "/opt/torch/.venv/bin/python"},
                                 {"REGIONTRACE_VENV", "/root/.cache/regiontrace/venv"},
                                 {"REGIONTRACE_TARGETS", "video_pipeline regiontrace_cli"},
                                 {"REGIONTRACE_PYTHONN", "/x"}},
                                {"nvtx"}, &errors);
  ASSERT_EQ(errors.size(), 1u);  // the misspelt one only
  EXPECT_NE(errors[0].find("REGIONTRACE_PYTHONN"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0].find("REGIONTRACE_PYTHON:"), std::string::npos) << errors[0];
  EXPECT_TRUE(t.keys("sinks").empty());
}

TEST(ConfigLayers, SeedProfilerVariables) {
  const Environment env = {
      {"FASTVIDEO_TORCH_PROFILER_DIR", "/mnt/traces/fastvideo"},
      {"FASTVIDEO_TORCH_PROFILE_REGIONS",
       "profiler_region_model_loading, training_step,profiler_region_misspelled"},
      {"FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES", "1"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY", "0"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_STACK", "yes"},
      {"FASTVIDEO_TORCH_PROFILER_WITH_FLOPS", ""},
  };
  const ConfigTree t = tree({}, env);
  EXPECT_EQ(value(t, "sinks.torch_profiler.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.torch_profiler.output_dir"), "/mnt/traces/fastvideo");
  EXPECT_EQ(value(t, "sinks.torch_profiler.prefix"), "fastvideo");
  // Misspelled entries are kept here; the dispatcher warns and drops them.
  EXPECT_EQ(items(t, "sinks.torch_profiler.regions"),
            (std::vector<std::string>{"profiler_region_model_loading", "training_step",
                                      "profiler_region_misspelled"}));
  // The seed's rule: anything but "0" is on.
  EXPECT_EQ(value(t, "sinks.torch_profiler.record_shapes"), "true");
  EXPECT_EQ(value(t, "sinks.torch_profiler.profile_memory"), "false");
  EXPECT_EQ(value(t, "sinks.torch_profiler.with_stack"), "true");
  EXPECT_EQ(value(t, "sinks.torch_profiler.with_flops"), "true");
  EXPECT_EQ(t.source("sinks.torch_profiler.with_flops"), "env FASTVIDEO_TORCH_PROFILER_WITH_FLOPS");
}

// FastVideo builds its profiler only when FASTVIDEO_TORCH_PROFILER_DIR is
// set: the regions and the four knobs alone profile nothing (it used to
// start the profiler and write ./regiontrace_out/torch_trace_*).
TEST(ConfigLayers, SeedProfilerRegionsWithoutTheDirProfileNothing) {
  const Environment env = {{"FASTVIDEO_TORCH_PROFILE_REGIONS", "profiler_region_model_loading"},
                           {"FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES", "1"}};
  const ConfigTree t = tree({}, env);
  EXPECT_EQ(value(t, "sinks.torch_profiler.enabled"), "false");
  EXPECT_EQ(t.source("sinks.torch_profiler.enabled"),
            "env FASTVIDEO_TORCH_PROFILE* without FASTVIDEO_TORCH_PROFILER_DIR");
  // They still shape a profiler something else turns on.
  EXPECT_EQ(items(t, "sinks.torch_profiler.regions"),
            (std::vector<std::string>{"profiler_region_model_loading"}));
  Environment on = env;
  on["REGIONTRACE_SINKS"] = "torch_profiler";
  EXPECT_EQ(value(tree({}, on), "sinks.torch_profiler.enabled"), "true");
  on.erase("REGIONTRACE_SINKS");
  on["FASTVIDEO_TORCH_PROFILER_DIR"] = "/mnt/traces";
  EXPECT_EQ(value(tree({}, on), "sinks.torch_profiler.enabled"), "true");
}

TEST(ConfigLayers, SeedProfilerDirMustBeAbsolute) {
  std::vector<std::string> errors;
  detail::build_config_tree({}, {{"FASTVIDEO_TORCH_PROFILER_DIR", "traces/run1"}}, {}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("FASTVIDEO_TORCH_PROFILER_DIR=`traces/run1`: must be an absolute"),
            std::string::npos)
      << errors[0];
}

// FastVideo reads its paths with os.path.expanduser: `~` is the home folder.
TEST(ConfigLayers, SeedPathsExpandTheHomeFolder) {
  const Environment env = {{"HOME", "/home/ada"},
                           {"FASTVIDEO_TORCH_PROFILER_DIR", "~/traces"},
                           {"FASTVIDEO_TRACE_ACTIVATIONS", "1"},
                           {"FASTVIDEO_TRACE_OUTPUT", "~/acts.jsonl"}};
  const ConfigTree t = tree({}, env);
  EXPECT_EQ(value(t, "sinks.torch_profiler.output_dir"), "/home/ada/traces");
  EXPECT_EQ(value(t, "sinks.activation_trace.output"), "/home/ada/acts.jsonl");
  EXPECT_EQ(value(tree({}, {{"HOME", "/home/ada"},
                            {"FASTVIDEO_TRACE_ACTIVATIONS", "1"},
                            {"FASTVIDEO_TRACE_OUTPUT", "~bob/acts.jsonl"}}),
                  "sinks.activation_trace.output"),
            "~bob/acts.jsonl");
}

TEST(ConfigLayers, SeedNvtxAndActivationVariables) {
  const Environment env = {{"FASTVIDEO_NVTX_PROFILE", "1"},
                           {"FASTVIDEO_TRACE_ACTIVATIONS", "1"},
                           {"FASTVIDEO_TRACE_LAYERS", "blocks\\.[0-3]$"},
                           {"FASTVIDEO_TRACE_STATS", "abs_mean,sum,max"},
                           {"FASTVIDEO_TRACE_OUTPUT", "/tmp/act_<pid>.jsonl"},
                           {"FASTVIDEO_TRACE_STEPS", "0,5"}};
  const ConfigTree t = tree({}, env);
  EXPECT_EQ(value(t, "sinks.nvtx.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.nvtx.prefix"), "fastvideo");
  EXPECT_EQ(value(t, "sinks.activation_trace.enabled"), "true");
  EXPECT_EQ(value(t, "sinks.activation_trace.layers"), "blocks\\.[0-3]$");
  EXPECT_EQ(items(t, "sinks.activation_trace.stats"),
            (std::vector<std::string>{"abs_mean", "sum", "max"}));
  // The sink replaces <pid> (and so adds no _rank<r>: FastVideo's exact name).
  EXPECT_EQ(value(t, "sinks.activation_trace.output"), "/tmp/act_<pid>.jsonl");
  EXPECT_EQ(value(t, "sinks.activation_trace.config_snapshot"), "false");
  EXPECT_EQ(value(t, "sinks.activation_trace.append"), "true");  // FastVideo opens it with "a"
  EXPECT_EQ(items(t, "sinks.activation_trace.steps"), (std::vector<std::string>{"0", "5"}));
}

TEST(ConfigLayers, SeedSwitchesOff) {
  const ConfigTree t =
      tree({}, {{"FASTVIDEO_NVTX_PROFILE", "0"}, {"FASTVIDEO_TRACE_ACTIVATIONS", "0"}});
  EXPECT_EQ(value(t, "sinks.nvtx.enabled"), "false");
  EXPECT_EQ(value(t, "sinks.activation_trace.enabled"), "false");
  const ConfigTree unset = tree({}, {});
  EXPECT_FALSE(unset.has("sinks.activation_trace"));
}

TEST(ConfigLayers, ProgramOptionsCanIgnoreTheEnvironment) {
  Options o;
  o.read_environment = false;
  const ConfigTree t = tree(o, {{"REGIONTRACE_OUTPUT_DIR", "/env"}});
  EXPECT_FALSE(t.has("output_dir"));
}

}  // namespace
}  // namespace regiontrace::test
