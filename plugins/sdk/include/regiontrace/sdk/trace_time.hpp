// Chrome-trace times ("ts", "dur") from integer nanoseconds: microseconds
// with the nanoseconds as up to three exact decimals ("12.5", "7.001"),
// never through a double. Spans that nest in nanoseconds then nest in the
// file; a double of epoch microseconds keeps only a quarter microsecond.
// Every trace this project writes uses it, and a third-party sink writing a
// Chrome trace can too.
#pragma once

#include <cstdint>
#include <string>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::json {

inline void append_microseconds(std::string& out, std::int64_t ns) {
  std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = 0 - magnitude;  // exact for the most negative value too
  }
  append_uint(out, magnitude / 1000);
  const unsigned frac = static_cast<unsigned>(magnitude % 1000);
  if (frac == 0) return;
  const char digits[3] = {static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  std::size_t n = 3;
  while (digits[n - 1] == '0') --n;  // frac != 0: a non-zero digit stops it
  out += '.';
  out.append(digits, n);
}

}  // namespace regiontrace::json
