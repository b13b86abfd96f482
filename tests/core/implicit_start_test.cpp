// The implicit start, as a program that never calls init() meets it: every
// entry point starts the sinks (declared region ids included), and a bad
// configuration found there never throws through user code: it is printed
// once and `on_error` decides (exit status 2, or go on with sinks off).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>

#include "recorded_events.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

class ImplicitStart : public ::testing::Test {
 protected:
  // Runs the program with the recorder sink configured only through the
  // environment, plus `vars` ("NAME=value ...").
  CommandResult run(const std::string& entry_point, const std::string& vars = {}) {
    return run_command("REGIONTRACE_PLUGIN_PATH=" + test_plugin_dir() + " REGIONTRACE_OUTPUT_DIR=" +
                       dir_.path() + " REGIONTRACE_RECORDER_FILE=" + file() + " " + vars + " " +
                       REGIONTRACE_FIRST_CONTACT_PROGRAM + " '" + entry_point + "'");
  }
  std::string file() const { return dir_.file("events.jsonl"); }

  CleanEnv env_;
  TempDir dir_;
};

class EveryEntryPoint : public ImplicitStart, public ::testing::WithParamInterface<const char*> {};

TEST_P(EveryEntryPoint, StartsTheSinks) {
  const std::string how = GetParam();
  const CommandResult r = run(how, "REGIONTRACE_SINKS=recorder");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("program went on, sinks on"), std::string::npos) << r.output;
  const auto events = read_jsonl(file());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["event"], "start");
  EXPECT_EQ(events.back()["event"], "close");
  if (how == "set_step") {
    ASSERT_EQ(events_of(events, "step").size(), 1u);
    EXPECT_EQ(events_of(events, "step")[0]["step"], 7);
  } else if (how == "mark") {
    ASSERT_EQ(events_of(events, "mark").size(), 1u);
    EXPECT_EQ(events_of(events, "mark")[0]["name"], "loaded");
  } else if (how == "snapshot") {
    ASSERT_EQ(events_of(events, "snapshot").size(), 1u);
    EXPECT_EQ(events_of(events, "snapshot")[0]["reason"], "loaded");
  } else {
    EXPECT_EQ(region_sequence(events),
              (std::vector<std::string>{"begin load_weights", "end load_weights"}));
  }
}

INSTANTIATE_TEST_SUITE_P(ImplicitStart, EveryEntryPoint,
                         ::testing::Values("Region(id)", "begin(id)", "Region(name)", "begin(name)",
                                           "RT_REGION", "in_region", "set_step", "mark",
                                           "snapshot"),
                         [](const auto& info) {
                           std::string name;
                           for (const char c : std::string(info.param)) {
                             if (std::isalnum(static_cast<unsigned char>(c))) name += c;
                           }
                           return name;
                         });

TEST_F(ImplicitStart, BadConfigurationExitsWithStatusTwoAndOneMessage) {
  for (const char* how : {"Region(id)", "RT_REGION"}) {
    const CommandResult r = run(how, "REGIONTRACE_SINKS=recorder,no_such_sink");
    EXPECT_EQ(r.exit_code, 2) << how << ": " << r.output;
    EXPECT_EQ(count(r.output, "unknown sink `no_such_sink`"), 1u) << r.output;
    EXPECT_EQ(count(r.output, "exiting with status 2"), 1u) << r.output;
    EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("program went on"), std::string::npos) << r.output;
  }
}

TEST_F(ImplicitStart, UnknownSinkNamesTheVariableThatNamedIt) {
  const CommandResult r = run("RT_REGION", "REGIONTRACE_SINKS=recorder,no_such_sink");
  EXPECT_NE(r.output.find("unknown sink `no_such_sink` (env REGIONTRACE_SINKS)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("(default)"), std::string::npos) << r.output;
}

TEST_F(ImplicitStart, OnErrorContinueFromTheEnvironmentRunsOnWithSinksOff) {
  const CommandResult r =
      run("Region(id)", "REGIONTRACE_SINKS=recorder,no_such_sink REGIONTRACE_ON_ERROR=continue");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "unknown sink `no_such_sink`"), 1u) << r.output;
  EXPECT_NE(r.output.find("running on with every sink off"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("program went on, sinks off"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(file()));
}

TEST_F(ImplicitStart, OnErrorContinueFromAProfile) {
  const std::string profile = dir_.file("profile.yaml");
  write_file(profile, "on_error: continue\nsinks:\n  recorder: {}\n  recordr: {}\n");
  const CommandResult r = run("begin(id)", "REGIONTRACE_CONFIG=" + profile);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "unknown sink `recordr` (" + profile), 1u) << r.output;
  EXPECT_NE(r.output.find("program went on, sinks off"), std::string::npos) << r.output;
}

TEST_F(ImplicitStart, MalformedProfileStillHonoursTheVariable) {
  const std::string profile = dir_.file("broken.yaml");
  write_file(profile, "sinks:\n  recorder: [unclosed\n");
  const CommandResult exits = run("set_step", "REGIONTRACE_CONFIG=" + profile);
  EXPECT_EQ(exits.exit_code, 2) << exits.output;
  EXPECT_EQ(count(exits.output, "malformed YAML"), 1u) << exits.output;
  const CommandResult goes_on =
      run("set_step", "REGIONTRACE_CONFIG=" + profile + " REGIONTRACE_ON_ERROR=continue");
  EXPECT_EQ(goes_on.exit_code, 0) << goes_on.output;
  EXPECT_EQ(count(goes_on.output, "malformed YAML"), 1u) << goes_on.output;
}

TEST_F(ImplicitStart, ExplicitInitKeepsThrowingWhateverThePolicy) {
  Options o =
      recorder_options(file(), {{"sinks.no_such_sink.enabled", "true"}, {"on_error", "continue"}});
  shutdown();
  EXPECT_THROW(init(o), Error);
  EXPECT_FALSE(enabled());
}

}  // namespace
}  // namespace regiontrace::test
