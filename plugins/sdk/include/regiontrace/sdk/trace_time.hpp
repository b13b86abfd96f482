// Chrome-trace times ("ts", "dur") from integer nanoseconds: microseconds
// with the nanoseconds as up to three exact decimals ("12.5", "7.001"),
// never through a double. Spans that nest in nanoseconds then nest in the
// file; a double of epoch microseconds keeps only a quarter microsecond.
// Every trace this project writes uses it, and a third-party sink writing a
// Chrome trace can too.
//
// Beside it, sdk::units: the one place nanoseconds become microseconds,
// milliseconds or seconds for a table or a JSON field, and back (settings in
// seconds, microseconds read from a trace), so no file carries its own
// `/ 1e3` to get wrong by a factor of a thousand.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

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

namespace regiontrace::sdk::units {

inline constexpr std::int64_t kNsPerUs = 1000;
inline constexpr std::int64_t kNsPerMs = 1000 * kNsPerUs;
inline constexpr std::int64_t kNsPerS = 1000 * kNsPerMs;

constexpr double to_us(std::int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}
constexpr double to_ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}
constexpr double to_seconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}
// A figure already in microseconds (a summary row's) in milliseconds.
constexpr double us_to_ms(double us) {
  return us / 1e3;
}

// Whole microseconds (a setting, a libtorch timestamp) exactly; fractional
// ones to the nearest nanosecond.
template <typename T>
std::int64_t us_to_ns(T us) {
  static_assert(std::is_arithmetic_v<T>, "a number of microseconds");
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(us) * kNsPerUs;
  } else {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(us) * 1e3));
  }
}

// Seconds (a setting such as flush_interval_s) to the nearest nanosecond.
inline std::int64_t seconds_to_ns(double s) {
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

// A trace's "ts" or "dur" text to nanoseconds: [-]digits[.digits] is read
// exactly, without a double (epoch microseconds need 16 digits, a double
// holds them only to a quarter microsecond), a fourth decimal rounding half
// up; anything else JSON allows (an exponent) through a double. The inverse
// of json::append_microseconds(). nullopt: not a number, or beyond what 64
// bits of nanoseconds hold.
inline std::optional<std::int64_t> parse_us(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  std::int64_t whole = 0;
  std::size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 17) {
    whole = whole * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  if (digits > 0 && whole < 9'000'000'000'000'000) {  // 9e15 us: the most 64 bits of ns hold
    std::int64_t frac = 0;
    int frac_digits = 0;
    bool round_up = false;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (frac_digits < 3) {
          frac = frac * 10 + (text[i] - '0');
          ++frac_digits;
        } else if (frac_digits == 3) {
          round_up = text[i] >= '5';
          ++frac_digits;
        }
        ++i;
      }
    }
    if (i == text.size()) {
      for (; frac_digits < 3; ++frac_digits) frac *= 10;
      const std::int64_t ns = whole * kNsPerUs + frac + (round_up ? 1 : 0);
      return negative ? -ns : ns;
    }
  }
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  // Beyond ±9e15 µs (285 years) nanoseconds no longer fit in 64 bits.
  if (ec != std::errc() || end != text.data() + text.size() || !(std::fabs(d) < 9e15)) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::llround(d * 1e3));
}

}  // namespace regiontrace::sdk::units
