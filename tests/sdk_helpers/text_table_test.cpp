// The one text table: the layouts the sinks' summaries and the CLI print
// with, and names that cannot take over the terminal.
#include "regiontrace/sdk/text_table.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace regiontrace::sdk::text {
namespace {

using Align = Table::Align;

TEST(TextTable, PadsColumnsToTheirWidestCellAndAlignsNumbersRight) {
  Table t({"name", "count"}, {Align::kLeft, Align::kRight});
  t.add_row({"a", "1"});
  t.add_row({"longer", "12345"});
  EXPECT_EQ(t.text(),
            "  name    count\n"
            "  a           1\n"
            "  longer  12345\n");
  std::ostringstream out;
  t.print(out, "");
  EXPECT_EQ(out.str(), "name    count\na           1\nlonger  12345\n");
}

TEST(TextTable, ControlCharactersInCellsAreEscaped) {
  Table t({"name", "n"});
  t.add_row({"evil\x1b[2J\rname\n", "1"});
  const std::string text = t.text("");
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("evil\\e[2J\\rname\\n  1"), std::string::npos) << text;
}

TEST(TextTable, MinimumWidthsKeepShortColumnsStable) {
  Table t;
  t.add_column({"region", Align::kLeft, 6}).add_column({"count", Align::kRight, 9});
  t.add_row({"ab", "3"});
  EXPECT_EQ(t.text(""),
            "region      count\n"
            "ab              3\n");
}

TEST(TextTable, MaximumWidthCutsWithAnEllipsisOrLetsTheCellOverflow) {
  Table cut;
  cut.add_column({"Name", Align::kLeft, 0, 8, true}).add_column({"N", Align::kRight});
  cut.add_row({"abcdefghijkl", "1"});
  cut.add_row({"ab", "2"});
  EXPECT_EQ(cut.text(""),
            "Name      N\n"
            "abcde...  1\n"
            "ab        2\n");
  Table overflow(1);
  overflow.add_column({"path", Align::kLeft, 0, 4}).add_column({"n", Align::kRight, 2});
  overflow.add_row({"abcdefg", "1"});
  overflow.add_row({"ab", "2"});
  EXPECT_EQ(overflow.text(""),
            "path  n\n"
            "abcdefg  1\n"
            "ab    2\n");
}

TEST(TextTable, ARunOnRowEndsInANoteThatDoesNotWidenItsColumn) {
  Table t;
  t.add_column({"range"}).add_column({"count", Align::kRight}).add_column({"total", Align::kRight});
  t.add_row({"a", "1", "5 ns"});
  t.add_run_on_row({"* m", "2", "mark, a long note"});
  EXPECT_EQ(t.text(""),
            "range  count  total\n"
            "a          1   5 ns\n"
            "* m        2  mark, a long note\n");
}

TEST(TextTable, TrailingSpacesAreDroppedAndMissingCellsAreEmpty) {
  Table t({"a", "b", "c"});
  t.add_row({"x"});
  t.add_row({"y", "", "z", "dropped"});
  EXPECT_EQ(t.text(""),
            "a  b  c\n"
            "x\n"
            "y     z\n");
  EXPECT_FALSE(t.empty());
  EXPECT_TRUE(Table({"a"}).empty());
}

}  // namespace
}  // namespace regiontrace::sdk::text
