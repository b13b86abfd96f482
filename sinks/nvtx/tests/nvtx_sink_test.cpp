// The nvtx sink seen from an NVTX tool: each test runs regions with the sink
// in its own domain and asserts the exact NVTX calls the recording injection
// saw (ctest attaches it through NVTX_INJECTION64_PATH).
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nvtx_records.hpp"
#include "region_colors.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

using nvtx::Calls;
using nvtx::calls_in_domain;
using nvtx::of_kind;
using nvtx::ranges;
using nvtx::registered_text;

// Options that run only the nvtx sink, in `domain`, writing into `dir`.
Options nvtx_options(const TempDir& dir, const std::string& domain,
                     std::map<std::string, std::string> extra = {}) {
  Options o;
  o.read_environment = false;
  o.set("output_dir", dir.path());
  o.set("sinks.nvtx.domain", domain);
  for (auto& [k, v] : extra) o.set(k, v);
  return o;
}

// "push:<text>" / "pop" for each range call, in order.
std::vector<std::string> range_script(const Calls& calls) {
  std::vector<std::string> out;
  for (const nlohmann::json& c : ranges(calls)) {
    out.push_back(c["kind"] == "push" ? "push:" + registered_text(calls, c) : "pop");
  }
  return out;
}

class NvtxSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("NVTX_INJECTION64_PATH"), nullptr)
        << "the recording injection is not attached: run these tests through ctest";
    set_step(std::numeric_limits<std::int64_t>::min());  // no step, as in a fresh process
  }
  void TearDown() override { shutdown(); }
  CleanEnv env_;
  TempDir dir_;
};

TEST_F(NvtxSinkTest, RangesUseStringsRegisteredOncePerRegion) {
  init(nvtx_options(dir_, "t_registered"));
  for (int i = 0; i < 3; ++i) {
    RT_REGION("nvtx_t.outer");
    RT_REGION("nvtx_t.inner");
  }
  shutdown();
  const Calls calls = calls_in_domain("t_registered");
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front()["kind"], "domain_create");
  EXPECT_EQ(calls.front()["call"], "nvtxDomainCreateA");

  std::map<std::string, int> registrations;
  for (const auto& c : of_kind(calls, "register_string")) registrations[c["text"]]++;
  EXPECT_EQ(registrations["regiontrace.region::nvtx_t.outer"], 1);
  EXPECT_EQ(registrations["regiontrace.region::nvtx_t.inner"], 1);

  const std::vector<std::string> once = {"push:regiontrace.region::nvtx_t.outer",
                                         "push:regiontrace.region::nvtx_t.inner", "pop", "pop"};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), once.begin(), once.end());
  EXPECT_EQ(range_script(calls), expected);

  for (const auto& c : ranges(calls)) {
    if (c["kind"] == "push") {
      EXPECT_EQ(c["call"], "nvtxDomainRangePushEx");
      EXPECT_EQ(c["message_type"], "registered");
      EXPECT_NE(c["color"], nullptr);
      EXPECT_EQ(c["payload_type"], nullptr) << "no step was set";
    } else {
      EXPECT_EQ(c["call"], "nvtxDomainRangePop");
    }
  }
  const Calls r = ranges(calls);
  EXPECT_EQ(r[0]["depth"], 0);
  EXPECT_EQ(r[1]["depth"], 1);
  EXPECT_EQ(r[2]["depth"], 1);
  EXPECT_EQ(r[3]["depth"], 0);
}

TEST_F(NvtxSinkTest, RangesNestOnTheThreadThatOpenedThem) {
  region_id("nvtx_t.worker");
  region_id("nvtx_t.task");
  init(nvtx_options(dir_, "t_threads"));
  {
    RT_REGION("nvtx_t.main");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < 5; ++i) {
          RT_REGION("nvtx_t.worker");
          RT_REGION("nvtx_t.task");
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  shutdown();
  const Calls calls = calls_in_domain("t_threads");
  std::map<long, Calls> by_thread;
  for (const auto& c : ranges(calls)) by_thread[c["tid"].get<long>()].push_back(c);
  ASSERT_EQ(by_thread.size(), 5u);
  int workers = 0;
  for (const auto& [tid, thread_calls] : by_thread) {
    std::vector<std::string> script;
    for (const auto& c : thread_calls) {
      script.push_back(c["kind"] == "push" ? "push:" + registered_text(calls, c) : "pop");
    }
    if (script.size() == 2) {
      EXPECT_EQ(script, (std::vector<std::string>{"push:regiontrace.region::nvtx_t.main", "pop"}));
      continue;
    }
    ++workers;
    std::vector<std::string> expected;
    for (int i = 0; i < 5; ++i) {
      expected.insert(expected.end(), {"push:regiontrace.region::nvtx_t.worker",
                                       "push:regiontrace.region::nvtx_t.task", "pop", "pop"});
    }
    EXPECT_EQ(script, expected) << "thread " << tid;
    // Every range opened on this thread is closed at depth 0 again.
    EXPECT_EQ(thread_calls.back()["depth"], 0);
  }
  EXPECT_EQ(workers, 4);
}

TEST_F(NvtxSinkTest, ExceptionUnwindingPopsEveryOpenRange) {
  init(nvtx_options(dir_, "t_unwind"));
  try {
    RT_REGION("nvtx_t.a");
    RT_REGION("nvtx_t.b");
    RT_REGION("nvtx_t.c");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  { RT_REGION("nvtx_t.after"); }
  shutdown();
  const Calls calls = calls_in_domain("t_unwind");
  EXPECT_EQ(range_script(calls),
            (std::vector<std::string>{"push:regiontrace.region::nvtx_t.a",
                                      "push:regiontrace.region::nvtx_t.b",
                                      "push:regiontrace.region::nvtx_t.c", "pop", "pop", "pop",
                                      "push:regiontrace.region::nvtx_t.after", "pop"}));
  const Calls r = ranges(calls);
  EXPECT_EQ(r[5]["depth"], 0);
  EXPECT_EQ(r[6]["depth"], 0) << "the region after the exception is top-level again";
}

TEST_F(NvtxSinkTest, StepTravelsAsInt64PayloadAndStepsBecomeMarks) {
  init(nvtx_options(dir_, "t_steps"));
  { RT_REGION("nvtx_t.before_steps"); }
  for (int step = 5; step <= 6; ++step) {
    set_step(step);
    RT_REGION("nvtx_t.step_body");
  }
  shutdown();
  const Calls calls = calls_in_domain("t_steps");
  const Calls pushes = of_kind(calls, "push");
  ASSERT_EQ(pushes.size(), 3u);
  EXPECT_EQ(pushes[0]["payload_type"], nullptr);
  for (int i = 1; i <= 2; ++i) {
    EXPECT_EQ(pushes[i]["payload_type"], "int64");
    EXPECT_EQ(pushes[i]["payload"], 4 + i);
  }
  const Calls marks = of_kind(calls, "mark");
  ASSERT_EQ(marks.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(marks[i]["call"], "nvtxDomainMarkEx");
    EXPECT_EQ(marks[i]["message_type"], "registered");
    EXPECT_EQ(registered_text(calls, marks[i]), "regiontrace.step");
    EXPECT_EQ(marks[i]["payload_type"], "int64");
    EXPECT_EQ(marks[i]["payload"], 5 + i);
  }
  // The step mark comes before the range of that step.
  EXPECT_LT(marks[0]["seq"].get<long>(), pushes[1]["seq"].get<long>());
  EXPECT_GT(marks[1]["seq"].get<long>(), pushes[1]["seq"].get<long>());
}

TEST_F(NvtxSinkTest, MarksBecomeNvtxMarksNamedWithThePrefix) {
  init(nvtx_options(dir_, "t_marks", {{"sinks.nvtx.prefix", "myapp"}}));
  set_step(3);
  {
    RT_REGION("nvtx_t.marked");
    mark("cfg_switch");
  }
  shutdown();
  const Calls calls = calls_in_domain("t_marks");
  const Calls marks = of_kind(calls, "mark");
  ASSERT_EQ(marks.size(), 2u);  // the step, then the mark
  EXPECT_EQ(registered_text(calls, marks[0]), "myapp.step");
  EXPECT_EQ(marks[1]["message_type"], "ascii");
  EXPECT_EQ(marks[1]["message"], "myapp.mark::cfg_switch");
  EXPECT_EQ(marks[1]["payload"], 3);
  EXPECT_EQ(registered_text(calls, of_kind(calls, "push").at(0)), "myapp.region::nvtx_t.marked");
}

TEST_F(NvtxSinkTest, MarksAndStepMarksCanBeSwitchedOff) {
  init(nvtx_options(dir_, "t_nomarks",
                    {{"sinks.nvtx.marks", "false"},
                     {"sinks.nvtx.step_marks", "false"},
                     {"sinks.nvtx.step_payload", "false"}}));
  set_step(1);
  {
    RT_REGION("nvtx_t.quiet");
    mark("ignored");
  }
  shutdown();
  const Calls calls = calls_in_domain("t_nomarks");
  EXPECT_TRUE(of_kind(calls, "mark").empty());
  const Calls pushes = of_kind(calls, "push");
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0]["payload_type"], nullptr);
}

TEST_F(NvtxSinkTest, RegionNotSelectedProducesNoRangeAndNoString) {
  region_id("nvtx_t.selected");
  region_id("nvtx_t.not_selected");
  init(nvtx_options(dir_, "t_selected", {{"sinks.nvtx.regions", "nvtx_t.selected"}}));
  for (int i = 0; i < 2; ++i) {
    RT_REGION("nvtx_t.not_selected");
    RT_REGION("nvtx_t.selected");
  }
  shutdown();
  const Calls calls = calls_in_domain("t_selected");
  EXPECT_EQ(range_script(calls),
            (std::vector<std::string>{"push:regiontrace.region::nvtx_t.selected", "pop",
                                      "push:regiontrace.region::nvtx_t.selected", "pop"}));
  for (const auto& c : of_kind(calls, "register_string")) {
    EXPECT_EQ(c["text"].get<std::string>().find("not_selected"), std::string::npos);
  }
  const Calls pushes = of_kind(calls, "push");
  EXPECT_EQ(pushes[0]["depth"], 0) << "the unselected outer region opens no NVTX level";
}

std::string hex(std::uint32_t argb) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "#%08X", argb);
  return buf;
}

TEST_F(NvtxSinkTest, ColorsComeFromProfileThenCatalogThenName) {
  declare_region("nvtx_t.cataloged", "has a catalog colour", 0x4C72B0);
  declare_region("nvtx_t.overridden", "catalog colour, overridden by the profile", 0x112233);
  init(nvtx_options(dir_, "t_colors",
                    {{"sinks.nvtx.colors", "nvtx_t.over*=#ABCDEF, nvtx_t.painted=00ff00"}}));
  { RT_REGION("nvtx_t.cataloged"); }
  { RT_REGION("nvtx_t.overridden"); }
  { RT_REGION("nvtx_t.painted"); }
  { RT_REGION("nvtx_t.plain"); }
  shutdown();
  const Calls calls = calls_in_domain("t_colors");
  std::map<std::string, std::string> color;
  for (const auto& c : of_kind(calls, "push")) color[registered_text(calls, c)] = c["color"];
  EXPECT_EQ(color["regiontrace.region::nvtx_t.cataloged"], "#FF4C72B0");
  EXPECT_EQ(color["regiontrace.region::nvtx_t.overridden"], "#FFABCDEF");
  EXPECT_EQ(color["regiontrace.region::nvtx_t.painted"], "#FF00FF00");
  EXPECT_EQ(color["regiontrace.region::nvtx_t.plain"],
            hex(regiontrace::nvtx::derived_color("nvtx_t.plain")));
}

TEST_F(NvtxSinkTest, CategoriesGroupRegionFamilies) {
  init(nvtx_options(dir_, "t_categories"));
  for (const char* name : {"blocks.0", "blocks.1", "head"}) {
    Region r(name);
  }
  shutdown();
  const Calls calls = calls_in_domain("t_categories");
  // Every routed region's family is named once (the catalog's too).
  std::map<std::uint32_t, std::string> family_of_category;
  std::set<std::string> families;
  for (const auto& c : of_kind(calls, "name_category")) {
    EXPECT_EQ(c["call"], "nvtxDomainNameCategoryA");
    EXPECT_TRUE(families.insert(c["text"]).second) << c["text"] << " named twice";
    family_of_category[c["category"]] = c["text"];
  }
  const Calls pushes = of_kind(calls, "push");
  ASSERT_EQ(pushes.size(), 3u);
  EXPECT_EQ(family_of_category[pushes[0]["category"]], "blocks");
  EXPECT_EQ(family_of_category[pushes[1]["category"]], "blocks");
  EXPECT_EQ(family_of_category[pushes[2]["category"]], "head");
}

TEST_F(NvtxSinkTest, EmptyDomainKeyUsesNvtxDefaultDomain) {
  init(nvtx_options(dir_, "", {{"sinks.nvtx.prefix", "t_default_domain"}}));
  { RT_REGION("nvtx_t.in_default_domain"); }
  shutdown();
  Calls calls;
  for (const auto& c : calls_in_domain("")) {
    if (c["kind"] == "register_string" || c["kind"] == "push" || c["kind"] == "pop") {
      calls.push_back(c);
    }
  }
  // Other tests' default-domain calls may be in the file: find ours by text.
  bool found = false;
  for (const auto& c : of_kind(calls, "push")) {
    if (registered_text(calls, c) == "t_default_domain.region::nvtx_t.in_default_domain") {
      found = true;
      EXPECT_EQ(c["domain_id"], 0);
      EXPECT_EQ(c["call"], "nvtxDomainRangePushEx");
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(NvtxSinkTest, SeedVariableTurnsTheSinkOnWithTheFastvideoPrefix) {
  ScopedEnv seed({{"FASTVIDEO_NVTX_PROFILE", "1"}, {"REGIONTRACE_NVTX_DOMAIN", "t_seed"}});
  Options o;
  o.set("output_dir", dir_.path());
  init(o);
  { RT_REGION("model_loading"); }  // the seed's catalog: a short name
  shutdown();
  const Calls calls = calls_in_domain("t_seed");
  EXPECT_EQ(
      range_script(calls),
      (std::vector<std::string>{"push:fastvideo.region::profiler_region_model_loading", "pop"}));
  // The catalog's colour for profiler_region_model_loading.
  EXPECT_EQ(of_kind(calls, "push").at(0)["color"], "#FF4C72B0");
}

TEST_F(NvtxSinkTest, SeedVariableZeroLeavesTheSinkOff) {
  ScopedEnv seed({{"FASTVIDEO_NVTX_PROFILE", "0"}, {"REGIONTRACE_NVTX_DOMAIN", "t_seed_off"}});
  Options o;
  o.set("output_dir", dir_.path());
  init(o);
  EXPECT_FALSE(enabled());
  { RT_REGION("model_loading"); }
  shutdown();
  // No sink made an NVTX call, so the tool may not even be loaded.
  if (nvtx::injection_loaded()) {
    EXPECT_TRUE(calls_in_domain("t_seed_off").empty());
  }
}

TEST_F(NvtxSinkTest, BadColorRuleFailsAtStartUpNamingTheItem) {
  try {
    init(nvtx_options(dir_, "t_bad", {{"sinks.nvtx.colors", "nvtx_t.x=#12345"}}));
    FAIL() << "init accepted a bad colour";
  } catch (const Error& e) {
    const std::string what = e.what();
    // Refused where every value is validated (and so by `regiontrace check`).
    EXPECT_NE(what.find("`sinks.nvtx.colors` (program): `nvtx_t.x=#12345`"), std::string::npos)
        << what;
    EXPECT_NE(what.find("#RRGGBB"), std::string::npos) << what;
  }
  EXPECT_FALSE(enabled());
}

TEST_F(NvtxSinkTest, NothingIsRecordedAfterShutdown) {
  init(nvtx_options(dir_, "t_shutdown"));
  { RT_REGION("nvtx_t.while_running"); }
  shutdown();
  { RT_REGION("nvtx_t.after_shutdown"); }
  mark("after_shutdown");
  const Calls calls = calls_in_domain("t_shutdown");
  EXPECT_EQ(range_script(calls),
            (std::vector<std::string>{"push:regiontrace.region::nvtx_t.while_running", "pop"}));
  EXPECT_TRUE(of_kind(calls, "mark").empty());
}

TEST_F(NvtxSinkTest, EachInitRegistersItsOwnStringsInItsDomain) {
  for (const char* domain : {"t_restart_a", "t_restart_b"}) {
    init(nvtx_options(dir_, domain));
    { RT_REGION("nvtx_t.restarted"); }
    shutdown();
  }
  for (const char* domain : {"t_restart_a", "t_restart_b"}) {
    const Calls calls = calls_in_domain(domain);
    EXPECT_EQ(range_script(calls),
              (std::vector<std::string>{"push:regiontrace.region::nvtx_t.restarted", "pop"}))
        << domain;
  }
}

}  // namespace
}  // namespace regiontrace::test
