// The CLI's names for the SDK's table (sdk/text_table.hpp), which the sinks'
// summaries print with too, and the CLI's own number formats.
#pragma once

#include <string>

#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/text_table.hpp"

namespace regiontrace::cli {

using TextTable = sdk::text::Table;

// Control characters as escapes (sdk/text_format.hpp); tables apply it to
// every cell.
using sdk::text::terminal_text;

// Shortest text that reads back as the same double; NaN and infinities by name.
std::string format_number(double value);
// Compact form for errors, times and ratios: 4 significant digits.
std::string format_short(double value);

}  // namespace regiontrace::cli
