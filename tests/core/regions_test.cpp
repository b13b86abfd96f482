#include <gtest/gtest.h>

#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

TEST(Regions, NestedRegionsArriveInOrderWithPaths) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  {
    RT_REGION("outer");
    RT_REGION("inner");
  }
  shutdown();
  std::vector<nlohmann::json> events;
  for (auto& e : read_jsonl(file)) {
    if (e["event"] == "begin" || e["event"] == "end") events.push_back(e);
  }
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["name"], "outer");
  EXPECT_EQ(events[1]["path"], "outer/inner");
  EXPECT_EQ(events[1]["depth"], 1);
  EXPECT_EQ(events[2]["event"], "end");
  EXPECT_EQ(events[2]["name"], "inner");
  EXPECT_EQ(events[3]["name"], "outer");
}

}  // namespace
}  // namespace regiontrace::test
