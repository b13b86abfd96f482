// The pieces every table is made of: numbers, durations, padding, names
// made safe for a terminal, and the distance behind "did you mean".
#include "regiontrace/sdk/text_format.hpp"

#include <gtest/gtest.h>

#include <string>

namespace regiontrace::sdk::text {
namespace {

TEST(TextFormat, FixedWritesTheAskedDecimals) {
  EXPECT_EQ(fixed(3.14159, 3), "3.142");
  EXPECT_EQ(fixed(2.0, 0), "2");
  EXPECT_EQ(fixed(-0.25, 1), "-0.2");  // printf's round-half-even on the binary value
}

TEST(TextFormat, DurationPicksTheUnitThatKeepsThreeOrFourDigits) {
  EXPECT_EQ(duration(0), "0 ns");
  EXPECT_EQ(duration(999), "999 ns");
  EXPECT_EQ(duration(1000), "1.00 us");
  EXPECT_EQ(duration(15060), "15.06 us");
  EXPECT_EQ(duration(999999), "1000.00 us");
  EXPECT_EQ(duration(1000000), "1.00 ms");
  EXPECT_EQ(duration(2050000), "2.05 ms");
  EXPECT_EQ(duration(1000000000), "1.000 s");
  EXPECT_EQ(duration(1234000000), "1.234 s");
}

TEST(TextFormat, PaddingKeepsLongerTextWhole) {
  EXPECT_EQ(padded("ab", 4), "ab  ");
  EXPECT_EQ(padded("abcdef", 4), "abcdef");
  EXPECT_EQ(right("ab", 4), "  ab");
  EXPECT_EQ(right("abcdef", 4), "abcdef");
}

TEST(TextFormat, TerminalTextEscapesControlCharactersOnly) {
  EXPECT_EQ(terminal_text("plain name/with spaces"), "plain name/with spaces");
  EXPECT_EQ(terminal_text("a\x1b[2Jb"), "a\\e[2Jb");
  EXPECT_EQ(terminal_text("\r\n\t"), "\\r\\n\\t");
  EXPECT_EQ(terminal_text(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(terminal_text("\x7f"), "\\x7f");
  EXPECT_EQ(terminal_text("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays readable
  EXPECT_EQ(terminal_text(terminal_text("a\x1b")), terminal_text("a\x1b"));
}

TEST(TextFormat, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("region_stats", "region_stat"), 1u);
}

}  // namespace
}  // namespace regiontrace::sdk::text
