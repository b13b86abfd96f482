#include "regiontrace/sdk/json_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace {

namespace json = regiontrace::json;

TEST(JsonWriter, NestsObjectsAndArraysWithCommas) {
  std::string out;
  json::Writer w(out);
  w.begin_object().field("name", "blocks.3").field("count", 3).field("ok", true);
  w.key("inner").begin_object().field("a", std::uint64_t{1}).field("b", nullptr).end_object();
  w.key("list").begin_array().value(1).value("two").begin_object().end_object().end_array();
  w.key("empty").begin_array().end_array();
  w.end_object();
  EXPECT_EQ(out,
            "{\"name\":\"blocks.3\",\"count\":3,\"ok\":true,\"inner\":{\"a\":1,\"b\":null},"
            "\"list\":[1,\"two\",{}],\"empty\":[]}");
  EXPECT_TRUE(nlohmann::json::accept(out));
}

// A document for people: a line per item down to the depth asked, deeper
// containers on their parent's line, empty ones as [] and {}.
TEST(JsonWriter, LinesToDepthPutsEachShallowItemOnItsOwnLine) {
  std::string out;
  json::Writer w(out);
  w.lines_to_depth(2);
  w.begin_object().field("rank", 0);
  w.key("sinks").begin_array().value("timeline").value("region_stats").end_array();
  w.key("none").begin_array().end_array();
  w.key("values").begin_object();
  w.key("a").begin_object().field("value", 1).field("source", "default").end_object();
  w.end_object().end_object();
  EXPECT_EQ(out,
            "{\n"
            "  \"rank\":0,\n"
            "  \"sinks\":[\n"
            "    \"timeline\",\n"
            "    \"region_stats\"\n"
            "  ],\n"
            "  \"none\":[],\n"
            "  \"values\":{\n"
            "    \"a\":{\"value\":1,\"source\":\"default\"}\n"
            "  }\n"
            "}");
  EXPECT_TRUE(nlohmann::json::accept(out));
}

TEST(JsonWriter, EscapesWhatJsonRequires) {
  std::string out;
  json::Writer w(out);
  const std::string nasty = std::string("q\"b\\n\nt\tc") + '\x01' + "\xc3\xa9";
  w.begin_object().field(nasty, nasty).end_object();
  const auto parsed = nlohmann::json::parse(out);
  EXPECT_EQ(parsed.begin().key(), nasty);
  EXPECT_EQ(parsed.begin().value().get<std::string>(), nasty);
}

TEST(JsonWriter, NonFiniteDoublesAreNamedStrings) {
  std::string out;
  json::Writer w(out);
  w.begin_array()
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .value(-std::numeric_limits<double>::infinity())
      .end_array();
  EXPECT_EQ(out, "[\"NaN\",\"Infinity\",\"-Infinity\"]");
}

std::uint64_t bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Shortest to_chars output parses back to the very same double: statistics
// written by C++ and by the Python reference can be compared exactly.
TEST(JsonWriter, DoublesParseBackBitExactly) {
  std::mt19937_64 rng(12345);
  std::vector<double> values = {0.0,
                                -0.0,
                                0.1,
                                1.0 / 3.0,
                                1e-310,  // subnormal
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::epsilon(),
                                123456789012345678.0};
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t b = rng();
    double d;
    std::memcpy(&d, &b, sizeof d);
    if (std::isfinite(d)) values.push_back(d);
  }
  for (double v : values) {
    std::string out;
    json::Writer(out).value(v);
    const double back = std::strtod(out.c_str(), nullptr);
    ASSERT_EQ(bits(back), bits(v)) << out;
    // (nlohmann reads "-0" as the integer 0: a reader's choice, not ours)
    if (v != 0.0) {
      ASSERT_EQ(bits(nlohmann::json::parse(out).get<double>()), bits(v)) << out;
    }
  }
}

TEST(JsonWriter, IntegersKeepEveryDigit) {
  std::string out;
  json::Writer w(out);
  w.begin_array()
      .value(std::numeric_limits<std::int64_t>::min())
      .value(std::numeric_limits<std::uint64_t>::max())
      .value(static_cast<short>(-7))
      .end_array();
  EXPECT_EQ(out, "[-9223372036854775808,18446744073709551615,-7]");
}

}  // namespace
