// examples/third_party_sink built the way its users build it: regiontrace
// installed into a prefix, the folder copied elsewhere, configured with
// find_package(RegionTrace) only, then loaded by video_pipeline through
// REGIONTRACE_PLUGIN_PATH. Its CSV is parsed and checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "example_runner.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

// Installing and building take a while: done once per test program run.
class ThirdPartySink : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    error_.clear();
    skip_reason_.clear();
    plugins_ = build_sink(*dir_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  // Installs the main build into a prefix and builds the sink out of tree
  // against it; returns the folder with the plugin.
  static std::string build_sink(const TempDir& dir) {
    const std::string cmake = REGIONTRACE_CMAKE_COMMAND;
    const std::string prefix = dir.file("prefix");
    const CommandResult install = run_command(quote(cmake) + " --install " + quote(binary_dir()) +
                                              " --prefix " + quote(prefix));
    if (install.exit_code != 0 && contains(install.output, "cannot find")) {
      skip_reason_ = "cmake --install needs every target built first:\n" + install.output;
      return {};
    }
    if (install.exit_code != 0) return fail("cmake --install failed:\n" + install.output);
    if (!fs::exists(prefix + "/include/regiontrace/plugin.hpp")) {
      return fail("the install has no include/regiontrace/plugin.hpp");
    }
    // A copy, away from the source tree: the template must stand alone.
    const std::string source = dir.file("region_csv");
    fs::copy(REGIONTRACE_EXAMPLES_SOURCE_DIR "/third_party_sink", source,
             fs::copy_options::recursive);
    const std::string build = dir.file("build");
    const CommandResult configure =
        run_command(quote(cmake) + " -S " + quote(source) + " -B " + quote(build) + " -G " +
                    quote(REGIONTRACE_CMAKE_GENERATOR) + " -DCMAKE_CXX_COMPILER=" +
                    quote(REGIONTRACE_CXX_COMPILER) + " -DCMAKE_PREFIX_PATH=" + quote(prefix));
    if (configure.exit_code != 0) return fail("configure failed:\n" + configure.output);
    // It found the installed package, not the build tree.
    const std::string cache = read_file(build + "/CMakeCache.txt");
    if (!contains(cache, "RegionTrace_DIR:PATH=" + prefix)) {
      return fail("RegionTrace was not found in the install prefix " + prefix);
    }
    const CommandResult compile = run_command(quote(cmake) + " --build " + quote(build));
    if (compile.exit_code != 0) return fail("build failed:\n" + compile.output);
    const std::string plugins = build + "/plugins";
    if (!fs::exists(plugins + "/regiontrace_sink_region_csv.so")) {
      return fail("no regiontrace_sink_region_csv.so in " + plugins + ":\n" + compile.output);
    }
    return plugins;
  }
  static std::string fail(const std::string& why) {
    error_ = why;
    return {};
  }

  static TempDir* dir_;
  static std::string plugins_;
  static std::string error_;
  static std::string skip_reason_;
};

TempDir* ThirdPartySink::dir_ = nullptr;
std::string ThirdPartySink::plugins_;
std::string ThirdPartySink::error_;
std::string ThirdPartySink::skip_reason_;

TEST_F(ThirdPartySink, BuildsFromTheInstalledPackageAndWritesItsCsv) {
  const std::string& plugins = plugins_;
  // Its schema reaches the host: keys through REGIONTRACE_REGION_CSV_<KEY>.
  const std::string out = dir_->file("out");
  std::vector<std::string> args = small_video_args();
  args.insert(args.end(), {"--output-dir", dir_->file("video")});
  const ProgramRun r = run_program(video_pipeline_program(), args,
                                   {{"REGIONTRACE_PLUGIN_PATH", plugins},
                                    {"REGIONTRACE_SINKS", "region_csv"},
                                    {"REGIONTRACE_REGION_CSV_SEPARATOR", ";"},
                                    {"REGIONTRACE_OUTPUT_DIR", out}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> files = files_under(out, [](const std::string& n) {
    return n.rfind("region_timings_rank0_pid", 0) == 0 && ends_with(n, ".csv");
  });
  ASSERT_EQ(files.size(), 1u) << r.output;

  const std::vector<std::string> lines = read_lines(files[0]);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(split(lines[0], ';'),
            (std::vector<std::string>{"rank", "pid", "thread", "step", "depth", "path", "region",
                                      "start_ns", "duration_ns", "unwinding"}));
  std::map<std::string, long long> phase_ns;          // depth-0 region -> duration
  std::map<std::string, std::set<long long>> blocks;  // block -> steps
  long long block_ns = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = split(lines[i], ';');
    ASSERT_EQ(f.size(), 10u) << lines[i];
    EXPECT_EQ(f[0], "0");
    const long long duration = std::stoll(f[8]);
    EXPECT_GT(duration, 0) << lines[i];
    EXPECT_EQ(f[9], "false");
    if (f[4] == "0") {
      EXPECT_EQ(f[5], f[6]) << lines[i];
      phase_ns[f[6]] = duration;
    } else {
      ASSERT_EQ(f[4], "1") << lines[i];
      EXPECT_EQ(f[5], "profiler_region_inference_denoising/" + f[6]) << lines[i];
      blocks[f[6]].insert(std::stoll(f[3]));
      block_ns += duration;
    }
  }
  EXPECT_EQ(phase_ns.size(), 4u);
  for (const char* p : {"model_loading", "inference_pre_denoising", "inference_denoising",
                        "inference_post_denoising"}) {
    EXPECT_EQ(phase_ns.count(std::string("profiler_region_") + p), 1u) << p;
  }
  ASSERT_EQ(blocks.size(), 4u);
  for (const auto& [block, steps] : blocks) {
    EXPECT_EQ(steps, (std::set<long long>{0, 1, 2, 3})) << block;
  }
  // The blocks run inside the denoising loop: their time is part of it.
  EXPECT_LT(block_ns, phase_ns["profiler_region_inference_denoising"]);

  // `regiontrace check` validates its keys like a built-in sink's.
  if (regiontrace_program().empty()) return;
  const std::string good = dir_->file("good.yaml"), bad = dir_->file("bad.yaml");
  write_file(good, "sinks:\n  region_csv:\n    separator: \";\"\n    max_rows: 10\n");
  write_file(bad, "sinks:\n  region_csv:\n    seperator: \";\"\n");
  const std::map<std::string, std::string> env = {{"REGIONTRACE_PLUGIN_PATH", plugins}};
  const ProgramRun ok = run_program(regiontrace_program(), {"check", good}, env);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  const ProgramRun typo = run_program(regiontrace_program(), {"check", bad}, env);
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_TRUE(contains(typo.output, "separator")) << typo.output;  // did you mean / valid keys
}

}  // namespace
}  // namespace regiontrace::test
