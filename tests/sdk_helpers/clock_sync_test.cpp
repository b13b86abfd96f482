#include "regiontrace/sdk/clock_sync.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace clock_sync = regiontrace::sdk::clock_sync;

TEST(ClockSync, APairReadsBothClocksTogether) {
  unsetenv("REGIONTRACE_TEST_CLOCK_SHIFT_NS");
  const std::int64_t mono_before = clock_sync::read_clock(CLOCK_MONOTONIC);
  const std::int64_t real_before = clock_sync::read_clock(CLOCK_REALTIME);
  const clock_sync::Pair p = clock_sync::read();
  const std::int64_t real_after = clock_sync::read_clock(CLOCK_REALTIME);
  const std::int64_t mono_after = clock_sync::read_clock(CLOCK_MONOTONIC);
  EXPECT_GE(p.monotonic_ns, mono_before);
  EXPECT_LE(p.monotonic_ns, mono_after);
  EXPECT_GE(p.realtime_ns, real_before);
  EXPECT_LE(p.realtime_ns, real_after);
}

TEST(ClockSync, TheTestShiftMovesOnlyTheWallClock) {
  setenv("REGIONTRACE_TEST_CLOCK_SHIFT_NS", "-5000000000", 1);
  const std::int64_t real_before = clock_sync::read_clock(CLOCK_REALTIME);
  const clock_sync::Pair p = clock_sync::read();
  unsetenv("REGIONTRACE_TEST_CLOCK_SHIFT_NS");
  const std::int64_t real_after = clock_sync::read_clock(CLOCK_REALTIME);
  EXPECT_GE(p.realtime_ns, real_before - 5000000000LL);
  EXPECT_LE(p.realtime_ns, real_after - 5000000000LL);
}

TEST(ClockSync, TheMetadataIsOneJsonMemberReadersCanParse) {
  const regiontrace::SinkContext context("timeline", "/tmp", 3, 1, 8, 4242, nullptr);
  std::string out = "{";
  clock_sync::append_trace_metadata(out, context, "timeline", {100, 10}, {300, 200});
  out += "}";
  const nlohmann::json j = nlohmann::json::parse(out);
  const nlohmann::json& m = j.at("regiontrace");
  EXPECT_EQ(m.at("sink"), "timeline");
  EXPECT_EQ(m.at("rank"), 3);
  EXPECT_EQ(m.at("local_rank"), 1);
  EXPECT_EQ(m.at("world_size"), 8);
  EXPECT_EQ(m.at("pid"), 4242);
  EXPECT_EQ(m.at("clockSync").at("start").at("realtime_ns"), 100);
  EXPECT_EQ(m.at("clockSync").at("start").at("monotonic_ns"), 10);
  EXPECT_EQ(m.at("clockSync").at("end").at("realtime_ns"), 300);
  EXPECT_EQ(m.at("clockSync").at("end").at("monotonic_ns"), 200);
}

}  // namespace
