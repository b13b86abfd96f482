// The shipped profiles (config/profiles/*.yaml): each one passes
// `regiontrace check`, explains its keys, and both examples run under it and
// leave the outputs its sinks promise.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "example_runner.hpp"
#include "sink_output_checks.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

const std::vector<std::string> kIssueProfiles = {"kernels", "memory", "nsys", "parity",
                                                 "quickstart"};

std::string nvtx_injection() {
  return REGIONTRACE_NVTX_INJECTION;
}

TEST(ShippedProfiles, AreTheOnesTheUserGuideNames) {
  const std::vector<std::string> shipped = shipped_profiles();
  for (const std::string& p : kIssueProfiles) {
    EXPECT_NE(std::find(shipped.begin(), shipped.end(), p), shipped.end()) << p << ".yaml missing";
  }
}

// Every key line sits in a group of keys that a comment introduces, or has a
// comment of its own: nobody meets a key that nothing explains.
TEST(ShippedProfiles, EveryKeyIsExplainedByAComment) {
  const std::regex key_line(R"(^(\s*)(- )?([A-Za-z_][A-Za-z0-9_]*):(.*)$)");
  for (const std::string& name : shipped_profiles()) {
    std::ifstream in(profile_path(name));
    std::string line;
    int number = 0;
    bool explained = false;  // the group the current line belongs to has a comment
    while (std::getline(in, line)) {
      ++number;
      const std::size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos) {
        explained = false;  // a blank line ends a group
        continue;
      }
      if (line[first] == '#') {
        explained = true;
        continue;
      }
      std::smatch m;
      if (!std::regex_match(line, m, key_line)) continue;  // list items, continuations
      const std::string key = m[3];
      const bool map_header = m[4].str().find_first_not_of(' ') == std::string::npos;
      const bool own_comment = m[4].str().find(" #") != std::string::npos;
      // `sinks:` and `<sink name>:` open maps; the sink is explained by the
      // profile's header and its keys by their own comments.
      if (map_header && (key == "sinks" || first == 2)) continue;
      EXPECT_TRUE(explained || own_comment)
          << name << ".yaml:" << number << ": key `" << key << "` has no comment";
    }
  }
}

TEST(ShippedProfiles, PassRegiontraceCheck) {
  if (regiontrace_program().empty()) GTEST_SKIP() << "the regiontrace CLI is not built";
  std::vector<std::string> skipped;
  for (const std::string& name : shipped_profiles()) {
    const std::vector<std::string> missing = missing_sinks(profile_sinks(profile_path(name)));
    if (!missing.empty()) {
      skipped.push_back(name + " (" + join_words(missing) + " not built)");
      continue;
    }
    const ProgramRun r = run_program(regiontrace_program(), {"check", profile_path(name)});
    EXPECT_EQ(r.exit_code, 0) << name << ".yaml:\n" << r.output;
  }
  if (!skipped.empty()) GTEST_SKIP() << "not checked: " << join_words(skipped, "; ");
}

// --- each example under each profile -------------------------------------------

struct ProfileRunCase {
  std::string profile;
  bool video;  // video_pipeline, else training_loop
};

void PrintTo(const ProfileRunCase& c, std::ostream* os) {
  *os << c.profile << ".yaml with " << (c.video ? "video_pipeline" : "training_loop");
}

std::string case_name(const testing::TestParamInfo<ProfileRunCase>& info) {
  return info.param.profile + (info.param.video ? "_video_pipeline" : "_training_loop");
}

class ProfileRun : public testing::TestWithParam<ProfileRunCase> {};

void check_sink(const std::string& sink, const ProfileRunCase& c, const std::string& out,
                const std::string& nvtx_dir) {
  const ExampleShape shape = c.video ? small_video_shape() : small_training_shape();
  SCOPED_TRACE("sink " + sink);
  if (sink == "torch_profiler") {
    TorchProfilerExpectations e;
    e.region = shape.hot_region;
    // Both profiles record steps 2 and 3 (see their schedules). The denoising
    // loop opens before set_step(0): its span has no step; blocks and
    // training steps open inside a step.
    e.window_steps = {2, 3};
    e.block_spans = c.profile == "quickstart";
    if (!c.video || e.block_spans) e.span_steps = {2, 3};
    e.record_shapes = true;
    check_torch_profiler_output(out, e);
  } else if (sink == "activation_trace") {
    check_activation_trace_output(out, shape, {"abs_mean", "mean", "std", "min", "max", "sum"});
  } else if (sink == "memory_snapshot") {
    check_memory_snapshot_output(out, shape);
    if (c.profile == "memory") {
      // snapshot_on_exit names a region each example leaves.
      EXPECT_FALSE(files_under(out,
                               [](const std::string& n) {
                                 return n.rfind("memory_snapshot_", 0) == 0 &&
                                        ends_with(n, ".json");
                               })
                       .empty())
          << "no snapshot file in " << out;
    }
  } else if (sink == "nvtx") {
    check_nvtx_records(nvtx_dir, shape, "regiontrace");
  } else if (sink == "region_stats") {
    check_region_stats_output(out, shape);
  } else if (sink == "timeline") {
    check_timeline_output(out, shape);
  } else {
    ADD_FAILURE() << "the test has no check for sink " << sink << " of " << c.profile << ".yaml";
  }
}

TEST_P(ProfileRun, WritesWhatItsSinksPromise) {
  const ProfileRunCase& c = GetParam();
  const std::string profile = profile_path(c.profile);
  const std::vector<std::string> sinks = profile_sinks(profile);
  std::vector<std::string> missing = missing_sinks(sinks);
  const bool wants_nvtx = std::find(sinks.begin(), sinks.end(), "nvtx") != sinks.end();
  if (wants_nvtx && nvtx_injection().empty() &&
      missing.end() == std::find(missing.begin(), missing.end(), "nvtx")) {
    missing.push_back("nvtx");  // nothing to observe its ranges with
  }
  std::vector<std::string> present;
  for (const std::string& s : sinks) {
    if (std::find(missing.begin(), missing.end(), s) == missing.end()) present.push_back(s);
  }
  if (present.empty()) GTEST_SKIP() << c.profile << ".yaml: not built: " << join_words(missing);

  TempDir dir;
  const std::string out = dir.file("trace");
  const std::string nvtx_dir = dir.file("nvtx");
  std::map<std::string, std::string> env;
  if (!missing.empty()) env["REGIONTRACE_SINKS"] = join_words(present, ",");
  if (wants_nvtx && !nvtx_injection().empty()) {
    std::filesystem::create_directories(nvtx_dir);
    env["NVTX_INJECTION64_PATH"] = nvtx_injection();
    env["NVTX_RECORD_FILE"] = nvtx_dir + "/calls_%p.jsonl";
  }
  std::vector<std::string> args = c.video ? small_video_args() : small_training_args();
  for (const std::string& a : {std::string("--profile"), profile, std::string("--trace-dir"), out,
                               std::string("--output-dir"), dir.file("example")}) {
    args.push_back(a);
  }
  const ProgramRun r =
      run_program(c.video ? video_pipeline_program() : training_loop_program(), args, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  SCOPED_TRACE("the program said:\n" + r.output);
  for (const std::string& sink : present) check_sink(sink, c, out, nvtx_dir);
  if (!missing.empty()) {
    GTEST_SKIP() << "checked " << join_words(present) << "; not built: " << join_words(missing);
  }
}

std::vector<ProfileRunCase> all_cases() {
  std::vector<ProfileRunCase> cases;
  for (const std::string& p : shipped_profiles()) {
    cases.push_back({p, true});
    cases.push_back({p, false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Examples, ProfileRun, testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace regiontrace::test
