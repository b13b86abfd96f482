// Loading sinks through the real loader, and the errors users see when it
// cannot: each names the file and why.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "recorded_events.hpp"
#include "regiontrace/inspect.hpp"
#include "regiontrace/plugin.hpp"  // kAbiVersion
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

std::string start_error(const Options& options) {
  try {
    init(options);
  } catch (const Error& e) {
    return e.what();
  }
  shutdown();
  return "no error";
}

Options with_sink(const std::string& paths, const std::string& sink) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", paths);
  o.set("sinks." + sink + ".enabled", "true");
  return o;
}

TEST(PluginLoading, BuiltInFolderSitsNextToTheLibrary) {
  EXPECT_EQ(std::filesystem::path(inspect::builtin_sink_folder()),
            std::filesystem::path(builtin_plugin_dir()));
}

TEST(PluginLoading, DiscoversSinksByFileName) {
  // Through the public inspection API: the test folder, then the built-in one.
  const inspect::SinkFiles found =
      inspect::find_sinks({{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()}});
  const std::vector<std::string>& errors = found.errors;
  EXPECT_TRUE(errors.empty());
  std::vector<std::string> names;
  for (const auto& f : found.sinks) names.push_back(f.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "recorder"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "noop"), names.end());
}

TEST(PluginLoading, MissingFolderIsAnError) {
  CleanEnv env;
  const std::string msg = start_error(with_sink("/nonexistent/plugins", "recorder"));
  EXPECT_NE(msg.find("plugin folder /nonexistent/plugins (program) does not exist"),
            std::string::npos)
      << msg;
}

// Issue 13: a shared library that is not a plugin (libz.so.1) was reported
// as a folder that does not exist.
TEST(PluginLoading, AFileWhereAFolderIsExpectedIsNamedAsAFile) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("libz.so.1");
  write_file(file, "not a folder");
  const std::string msg = start_error(with_sink(file, "recorder"));
  EXPECT_NE(msg.find("plugin path entry " + file + " (program) is a file, not a folder"),
            std::string::npos)
      << msg;
}

TEST(PluginLoading, MissingFileIsAnError) {
  CleanEnv env;
  const std::string msg = start_error(with_sink("/nonexistent/regiontrace_sink_x.so", "x"));
  EXPECT_NE(msg.find("plugin /nonexistent/regiontrace_sink_x.so (program): no such file"),
            std::string::npos)
      << msg;
}

TEST(PluginLoading, ALibraryThatIsNotAPluginIsRefused) {
  CleanEnv env;
  const std::string msg = start_error(with_sink(REGIONTRACE_BAD_PLUGIN_DIR, "not_a_plugin"));
  EXPECT_NE(msg.find("regiontrace_sink_not_a_plugin.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not a regiontrace plugin"), std::string::npos) << msg;
}

// Built by an SDK before ABI 7, which wrote no build-info note: refused from
// the file, before its code can run.
TEST(PluginLoading, APluginOfAnEarlierSdkIsRefusedFromItsFile) {
  CleanEnv env;
  const std::string msg = start_error(with_sink(REGIONTRACE_BAD_PLUGIN_DIR, "wrong_abi"));
  EXPECT_NE(msg.find("regiontrace_sink_wrong_abi.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("built against an earlier regiontrace SDK (ABI before 7"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("speaks version " + std::to_string(kAbiVersion)), std::string::npos) << msg;
}

// What the loader refuses, it refuses from the file: none of the plugin's
// code runs, its static constructors included.
TEST(PluginLoading, ARefusedPluginsCodeNeverRuns) {
  TempDir dir;
  CleanEnv env;
  const std::string mark = dir.file("constructors.txt");
  setenv("REGIONTRACE_TEST_CONSTRUCTOR_MARK", mark.c_str(), 1);
  std::vector<std::string> sinks = {"abi_999", "not_a_plugin"};
#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
  sinks.push_back("old_string_abi");
#endif
  for (const std::string& sink : sinks) {
    const std::string msg = start_error(with_sink(REGIONTRACE_BAD_PLUGIN_DIR, sink));
    EXPECT_NE(msg.find("regiontrace_sink_" + sink + ".so"), std::string::npos) << msg;
  }
  unsetenv("REGIONTRACE_TEST_CONSTRUCTOR_MARK");
  EXPECT_FALSE(std::filesystem::exists(mark)) << read_file(mark);
}

// A file planted on the plugin path under a name another file has: the
// names decide before anything is loaded, and neither file is.
TEST(PluginLoading, AFilePlantedUnderATakenNameNeverRuns) {
  TempDir dir;
  CleanEnv env;
  const std::string mark = dir.file("constructors.txt");
  std::filesystem::create_directory(dir.file("planted"));
  std::filesystem::copy_file(REGIONTRACE_BAD_PLUGIN_DIR "/regiontrace_sink_not_a_plugin.so",
                             dir.file("planted/regiontrace_sink_noop.so"));
  setenv("REGIONTRACE_TEST_CONSTRUCTOR_MARK", mark.c_str(), 1);
  const std::string msg =
      start_error(with_sink(dir.file("planted") + ":" + test_plugin_dir(), "noop"));
  unsetenv("REGIONTRACE_TEST_CONSTRUCTOR_MARK");
  EXPECT_NE(msg.find("sink `noop` is provided twice"), std::string::npos) << msg;
  EXPECT_NE(msg.find("neither is loaded"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(mark)) << read_file(mark);
}

// Every plugin this tree builds carries the note the loader reads first, and
// it is this build's; the bad ones are told apart by it without loading.
TEST(PluginLoading, EveryBuiltPluginCarriesAMatchingBuildNote) {
  const inspect::SinkFiles good =
      inspect::find_sinks({{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()}});
  ASSERT_GE(good.sinks.size(), 3u);
  for (const inspect::SinkFile& f : good.sinks) EXPECT_EQ(f.refusal, "") << f.path;
  const inspect::SinkFiles bad =
      inspect::find_sinks({{"REGIONTRACE_PLUGIN_PATH", REGIONTRACE_BAD_PLUGIN_DIR}});
  std::map<std::string, std::string> refusal;
  for (const inspect::SinkFile& f : bad.sinks) refusal[f.name] = f.refusal;
  EXPECT_NE(refusal["abi_999"].find("ABI version 999 (ABI 999, SDK " +
                                    std::string(REGIONTRACE_SDK_VERSION_STRING) + ", " +
                                    kBuildInfo.compiler),
            std::string::npos)
      << refusal["abi_999"];
  EXPECT_NE(refusal["not_a_plugin"].find("is not a regiontrace plugin"), std::string::npos)
      << refusal["not_a_plugin"];
  EXPECT_NE(refusal["wrong_abi"].find("earlier regiontrace SDK"), std::string::npos)
      << refusal["wrong_abi"];
}

// A real plugin, exported with REGIONTRACE_SINK_PLUGIN but compiled with
// -DREGIONTRACE_SDK_ABI_VERSION_OVERRIDE=999: refused from its build info,
// with both builds named.
TEST(PluginLoading, APluginBuiltAgainstAnotherAbiIsRefusedNamingBothBuilds) {
  CleanEnv env;
  const std::string msg = start_error(with_sink(REGIONTRACE_BAD_PLUGIN_DIR, "abi_999"));
  EXPECT_NE(msg.find("plugin " REGIONTRACE_BAD_PLUGIN_DIR "/regiontrace_sink_abi_999.so"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("built against regiontrace plugin ABI version 999 (ABI 999, SDK " +
                     std::string(REGIONTRACE_SDK_VERSION_STRING) + ", " + kBuildInfo.compiler),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("speaks version " + std::to_string(kAbiVersion) + " (ABI " +
                     std::to_string(kAbiVersion) + ", SDK "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("rebuild the plugin against this SDK"), std::string::npos) << msg;
}

// The same sink compiled with -D_GLIBCXX_USE_CXX11_ABI=0: its std::string is
// not the host's, so it is refused although its ABI version matches.
TEST(PluginLoading, APluginBuiltWithAnotherStdStringAbiIsRefused) {
#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
  CleanEnv env;
  const std::string msg = start_error(with_sink(REGIONTRACE_BAD_PLUGIN_DIR, "old_string_abi"));
  EXPECT_NE(msg.find("regiontrace_sink_old_string_abi.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("another C++ standard library ABI"), std::string::npos) << msg;
  EXPECT_NE(msg.find("_GLIBCXX_USE_CXX11_ABI=0) than this libregiontrace"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("_GLIBCXX_USE_CXX11_ABI=1)"), std::string::npos) << msg;
#else
  GTEST_SKIP() << "needs libstdc++ with the C++11 ABI";
#endif
}

// Every plugin this tree builds exports its build info, and it is this
// build's: the entry point a host of any later version reads first.
TEST(PluginLoading, EveryBuiltPluginReportsItsBuild) {
  std::vector<std::string> files;
  for (const std::string& dir : {builtin_plugin_dir(), test_plugin_dir()}) {
    if (!std::filesystem::is_directory(dir)) continue;  // a build without built-in sinks
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".so") files.push_back(entry.path().string());
    }
  }
  ASSERT_GE(files.size(), 3u);
  for (const std::string& file : files) {
    void* handle = dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << file << ": " << dlerror();
    using InfoFn = const regiontrace_build_info* (*)();
    auto fn = reinterpret_cast<InfoFn>(dlsym(handle, "regiontrace_plugin_build_info"));
    ASSERT_NE(fn, nullptr) << file << " does not export regiontrace_plugin_build_info";
    const regiontrace_build_info* info = fn();
    ASSERT_NE(info, nullptr) << file;
    EXPECT_EQ(info->size, sizeof(regiontrace_build_info)) << file;
    EXPECT_EQ(info->abi_version, static_cast<std::uint32_t>(kAbiVersion)) << file;
    EXPECT_STREQ(info->sdk_version, REGIONTRACE_SDK_VERSION_STRING) << file;
    EXPECT_STREQ(info->compiler, kBuildInfo.compiler) << file;
    EXPECT_STREQ(info->stdlib, kBuildInfo.stdlib) << file;
    EXPECT_EQ(info->cxx11_abi, kBuildInfo.cxx11_abi) << file;
    // Hosts before ABI 2 read only this, and refuse the plugin by it.
    auto legacy = reinterpret_cast<int (*)()>(dlsym(handle, "regiontrace_plugin_abi_version"));
    ASSERT_NE(legacy, nullptr) << file;
    EXPECT_EQ(legacy(), kAbiVersion) << file;
  }
}

TEST(PluginLoading, TwoFilesForOneSinkNameAreAnError) {
  CleanEnv env;
  TempDir dir;
  std::filesystem::copy_file(test_plugin_dir() + "/regiontrace_sink_noop.so",
                             dir.file("regiontrace_sink_noop.so"));
  const std::string msg = start_error(with_sink(test_plugin_dir() + ":" + dir.path(), "recorder"));
  EXPECT_NE(msg.find("sink `noop` is provided twice"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir.path()), std::string::npos) << msg;
}

TEST(PluginLoading, AFileNamedForAnotherSinkIsRefused) {
  CleanEnv env;
  TempDir dir;
  std::filesystem::copy_file(test_plugin_dir() + "/regiontrace_sink_noop.so",
                             dir.file("regiontrace_sink_renamed.so"));
  const std::string msg = start_error(with_sink(dir.path(), "renamed"));
  EXPECT_NE(msg.find("named for sink `renamed` but exports sink `noop`"), std::string::npos) << msg;
}

TEST(PluginLoading, UnknownSinkSuggestsTheClosestName) {
  CleanEnv env;
  const std::string msg = start_error(with_sink(test_plugin_dir(), "recordr"));
  EXPECT_NE(msg.find("unknown sink `recordr`"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean `recorder`?"), std::string::npos) << msg;
}

// A sink built out of tree and pointed at with the wrong folder: the error
// lists each folder searched and what is in it, and where the plugin is.
TEST(PluginLoading, UnknownSinkListsTheFoldersSearchedAndWhatTheyHold) {
  CleanEnv env;
  TempDir dir;
  write_file(dir.file("libline_counter.so"), "a library, not named as a plugin");
  std::filesystem::create_directories(dir.file("plugins"));
  write_file(dir.file("plugins/regiontrace_sink_line_counter.so"), "found below");
  const std::string msg = start_error(with_sink(dir.path(), "line_counter"));
  EXPECT_NE(msg.find("unknown sink `line_counter`"), std::string::npos) << msg;
  EXPECT_NE(msg.find("folders searched: " + dir.path() +
                     " (program): no regiontrace_sink_<name>.so; ignored, not named "
                     "regiontrace_sink_<name>.so: libline_counter.so; but " +
                     dir.file("plugins") +
                     " holds regiontrace_sink_line_counter.so: put that folder in the path"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(builtin_plugin_dir() + " (built-in sinks): "), std::string::npos) << msg;
}

// REGIONTRACE_PLUGIN_PATH alone enables nothing: said, with the way to.
TEST(PluginLoading, APluginPathWithNoSinkEnabledSaysSo) {
  CleanEnv env;
  TempDir dir;
  {
    ScopedEnv vars(
        {{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()}, {"REGIONTRACE_OUTPUT_DIR", dir.path()}});
    testing::internal::CaptureStderr();
    init();
    EXPECT_FALSE(enabled());
    shutdown();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("no sink is enabled, so nothing is recorded: the plugin path only says "
                       "where sinks are. It has "),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("`recorder` (" + test_plugin_dir()), std::string::npos) << log;
    EXPECT_NE(log.find(". Enable one with REGIONTRACE_SINKS="), std::string::npos) << log;
  }
  // The folder above the plugins: nothing found there, and where they are.
  std::filesystem::create_directories(dir.file("plugins"));
  write_file(dir.file("plugins/regiontrace_sink_mine.so"), "");
  ScopedEnv vars({{"REGIONTRACE_PLUGIN_PATH", dir.path()}});
  testing::internal::CaptureStderr();
  init();
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("no sink is enabled and the plugin path holds no sink plugin"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(dir.file("plugins") + " holds regiontrace_sink_mine.so"), std::string::npos)
      << log;
}

TEST(PluginLoading, PluginPathFromTheEnvironment) {
  CleanEnv env;
  TempDir dir;
  ScopedEnv vars({{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()},
                  {"REGIONTRACE_SINKS", "recorder"},
                  {"REGIONTRACE_RECORDER_FILE", dir.file("env.jsonl")},
                  {"REGIONTRACE_OUTPUT_DIR", dir.path()}});
  init();
  EXPECT_TRUE(enabled());
  { RT_REGION("from_env"); }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(dir.file("env.jsonl"))),
            (std::vector<std::string>{"begin from_env", "end from_env"}));
}

}  // namespace
}  // namespace regiontrace::test
