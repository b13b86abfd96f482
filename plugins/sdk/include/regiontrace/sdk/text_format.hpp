// The few pieces every table regiontrace prints is made of, written once:
// fixed-point numbers, durations with their unit, padding into columns,
// names made safe for a terminal, and the edit distance behind "did you
// mean" (a key, a sink, a module name).
// Header-only, not part of the plugin ABI: nothing here crosses the boundary.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::sdk::text {

// `v` with `decimals` digits after the point ("3.142").
inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// A duration in the unit that keeps three or four significant digits:
// "812 ns", "15.06 us", "2.05 ms", "1.234 s".
inline std::string duration(std::int64_t ns) {
  char buf[32];
  if (ns < units::kNsPerUs) {
    std::snprintf(buf, sizeof(buf), "%lld ns", static_cast<long long>(ns));
  } else if (ns < units::kNsPerMs) {
    std::snprintf(buf, sizeof(buf), "%.2f us", units::to_us(ns));
  } else if (ns < units::kNsPerS) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", units::to_ms(ns));
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f s", units::to_seconds(ns));
  }
  return buf;
}

// `s` left-aligned in `width` columns (longer text is kept whole).
inline std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// `s` right-aligned in `width` columns (longer text is kept whole).
inline std::string right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// `text` safe to print to a terminal: control characters (ESC, CR, NUL...)
// written as escapes (\e, \r, \x00), so a region or op name cannot move the
// cursor, recolour or hide what follows it. Every table applies it to names.
inline std::string terminal_text(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case 0x1b:
        out += "\\e";
        break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  return out;
}

// Levenshtein distance: insertions, deletions and substitutions of bytes.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace regiontrace::sdk::text
