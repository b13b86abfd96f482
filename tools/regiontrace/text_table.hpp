// A plain-text table for terminal reports: columns padded to their widest
// cell, numeric columns right-aligned so digits line up.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/text_format.hpp"

namespace regiontrace::cli {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  // One header per column; `align` may be shorter (the rest is left-aligned).
  TextTable(std::vector<std::string> headers, std::vector<Align> align = {});

  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out, const std::string& indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

// Control characters as escapes (sdk/text_format.hpp); tables apply it to
// every cell.
using sdk::text::terminal_text;

// Shortest text that reads back as the same double; NaN and infinities by name.
std::string format_number(double value);
// Compact form for errors, times and ratios: 4 significant digits.
std::string format_short(double value);

}  // namespace regiontrace::cli
