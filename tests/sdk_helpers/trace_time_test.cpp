// Chrome-trace times: exact microseconds from integer nanoseconds, the one
// formatting every trace writer uses.
#include "regiontrace/sdk/trace_time.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace regiontrace::json {
namespace {

std::string us(std::int64_t ns) {
  std::string out;
  append_microseconds(out, ns);
  return out;
}

TEST(TraceTime, WholeMicrosecondsHaveNoDecimals) {
  EXPECT_EQ(us(0), "0");
  EXPECT_EQ(us(1000), "1");
  EXPECT_EQ(us(-3000), "-3");
}

TEST(TraceTime, NanosecondsAreExactDecimalsWithoutTrailingZeros) {
  EXPECT_EQ(us(1500), "1.5");
  EXPECT_EQ(us(1050), "1.05");
  EXPECT_EQ(us(1001), "1.001");
  EXPECT_EQ(us(7), "0.007");
  EXPECT_EQ(us(-2500), "-2.5");
  EXPECT_EQ(us(-1), "-0.001");
}

// Epoch nanoseconds, where a double would keep a quarter microsecond.
TEST(TraceTime, EpochTimesKeepEveryNanosecond) {
  EXPECT_EQ(us(1'796'379'502'971'942'068), "1796379502971942.068");
  EXPECT_EQ(us(std::numeric_limits<std::int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(us(std::numeric_limits<std::int64_t>::min()), "-9223372036854775.808");
}

}  // namespace
}  // namespace regiontrace::json
