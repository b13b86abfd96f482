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

namespace regiontrace::sdk::units {
namespace {

TEST(Units, NanosecondsToMicrosecondsMillisecondsAndSeconds) {
  EXPECT_DOUBLE_EQ(to_us(1500), 1.5);
  EXPECT_DOUBLE_EQ(to_ms(2500000), 2.5);
  EXPECT_DOUBLE_EQ(to_seconds(3000000000), 3.0);
  EXPECT_DOUBLE_EQ(to_us(-7), -0.007);
}

TEST(Units, MicrosecondsAndSecondsToNanoseconds) {
  EXPECT_EQ(us_to_ns(1000), 1000000);  // an integer setting: exact
  EXPECT_EQ(us_to_ns(std::int64_t{1700000000000000}), 1700000000000000000);
  EXPECT_EQ(us_to_ns(1.0015), 1002);  // a double: to the nearest ns
  EXPECT_EQ(us_to_ns(-2.5), -2500);
  EXPECT_EQ(seconds_to_ns(0.001), 1000000);
  EXPECT_EQ(seconds_to_ns(2.5), 2500000000);
}

TEST(Units, ParseUsReadsWhatAppendMicrosecondsWrote) {
  for (const std::int64_t ns :
       {std::int64_t{0}, std::int64_t{7}, std::int64_t{1001}, std::int64_t{-3000},
        std::int64_t{1733390000123456789}, std::int64_t{-1733390000123456789}}) {
    std::string text;
    json::append_microseconds(text, ns);
    EXPECT_EQ(parse_us(text), ns) << text;
  }
}

TEST(Units, ParseUsRoundsAFourthDecimalAndTakesExponents) {
  EXPECT_EQ(parse_us("1.0005"), 1001);
  EXPECT_EQ(parse_us("1.00049"), 1000);
  EXPECT_EQ(parse_us("1.5e3"), 1500000);
  EXPECT_EQ(parse_us("12"), 12000);
}

TEST(Units, ParseUsRefusesWhatIsNotANumberOrDoesNotFit) {
  EXPECT_EQ(parse_us(""), std::nullopt);
  EXPECT_EQ(parse_us("-"), std::nullopt);
  EXPECT_EQ(parse_us("12us"), std::nullopt);
  EXPECT_EQ(parse_us("1e20"), std::nullopt);
  EXPECT_EQ(parse_us("99999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace regiontrace::sdk::units
