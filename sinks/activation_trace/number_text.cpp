#include "number_text.hpp"

#include <cmath>
#include <cstring>

#if defined(REGIONTRACE_HAVE_FMT)
#include <fmt/format.h>
#endif

namespace regiontrace::activation {

#if defined(REGIONTRACE_HAVE_FMT)
namespace {

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

constexpr std::uint64_t kPowersOfTen[] = {1ull,
                                          10ull,
                                          100ull,
                                          1000ull,
                                          10000ull,
                                          100000ull,
                                          1000000ull,
                                          10000000ull,
                                          100000000ull,
                                          1000000000ull,
                                          10000000000ull,
                                          100000000000ull,
                                          1000000000000ull,
                                          10000000000000ull,
                                          100000000000000ull,
                                          1000000000000000ull,
                                          10000000000000000ull,
                                          100000000000000000ull,
                                          1000000000000000000ull,
                                          10000000000000000000ull};

// Decimal digits of v >= 1: log10 estimated from the bit length (1233/4096
// is log10(2) from below), corrected by one comparison.
int digit_count(std::uint64_t v) {
  const int bits = 64 - __builtin_clzll(v);
  const int guess = (bits * 1233) >> 12;
  return guess + (v >= kPowersOfTen[guess] ? 1 : 0);
}

// The n digits of v (below 10^9) into p[0, n), right to left, in 32 bits.
void write_digits32(char* p, std::uint32_t v, int n) {
  char* q = p + n;
  while (v >= 100) {
    const std::uint32_t pair = v % 100;
    v /= 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * pair, 2);
  }
  if (v >= 10) {
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * v, 2);
  } else if (q > p) {
    *--q = static_cast<char>('0' + v);
  }
}

// The n decimal digits of v (at most 17 for a double) into p[0, n).
void write_digits(char* p, std::uint64_t v, int n) {
  if (n > 8) {
    const auto low = static_cast<std::uint32_t>(v % 100000000);
    write_digits32(p, static_cast<std::uint32_t>(v / 100000000), n - 8);
    // All eight low digits, leading zeros included.
    std::uint32_t rest = low;
    for (int i = 6; i >= 0; i -= 2) {
      std::memcpy(p + n - 8 + i, kDigitPairs + 2 * (rest % 100), 2);
      rest /= 100;
    }
    return;
  }
  write_digits32(p, static_cast<std::uint32_t>(v), n);
}

}  // namespace

// Copies of a fixed size compile to a few vector moves; copies of the
// digits' own length were calls to memcpy, a fifth of a record's
// instructions. They may write past the text (kDoubleScratch).
char* write_double(char* p, double v) {
  if (std::signbit(v)) {
    *p++ = '-';
    v = -v;
  }
  if (v == 0) {
    *p++ = '0';
    return p;
  }
  // v = significand * 10^exponent, the shortest significand that reads back
  // as v (trailing zeros removed).
  const auto decimal = fmt::detail::dragonbox::to_decimal(v);
  const std::uint64_t significand = decimal.significand;
  const int exponent = decimal.exponent;
  const int n = digit_count(significand);     // at most 17
  const int sci_exponent = exponent + n - 1;  // d.ddd e<sci_exponent>
  const int abs_sci = sci_exponent < 0 ? -sci_exponent : sci_exponent;
  const int sci_length = n + (n > 1 ? 1 : 0) + 2 + (abs_sci >= 100 ? 3 : 2);
  const int plain_length = exponent >= 0 ? n + exponent : sci_exponent >= 0 ? n + 1 : 2 - exponent;
  char digits[40];  // n digits, then room for the fixed-size copies below
  write_digits(digits, significand, n);
  if (plain_length <= sci_length) {
    if (exponent > 0) {
      // An integer (below 10^22 here): of the texts as short as the
      // shortest, to_chars writes the nearest, its exact digits.
      if (v < 18446744073709551616.0) {
        return std::to_chars(p, p + 20, static_cast<std::uint64_t>(v)).ptr;
      }
      unsigned __int128 whole = static_cast<unsigned __int128>(v);
      char text[24];
      char* q = text + sizeof(text);
      do {
        *--q = static_cast<char>('0' + static_cast<unsigned>(whole % 10));
        whole /= 10;
      } while (whole != 0);
      const auto length = static_cast<std::size_t>(text + sizeof(text) - q);
      std::memcpy(p, q, length);
      return p + length;
    }
    std::memcpy(p, digits, 20);
    if (exponent == 0) return p + n;
    if (sci_exponent >= 0) {  // dd.ddd
      const int whole = sci_exponent + 1;
      p[whole] = '.';
      std::memcpy(p + whole + 1, digits + whole, 20);
      return p + n + 1;
    }
    // 0.000ddd: plain only while it is no longer than d.ddde-XX, so at most
    // three zeros follow the point.
    const int zeros = -sci_exponent - 1;
    std::memcpy(p, "0.000", 5);
    std::memcpy(p + 2 + zeros, digits, 20);
    return p + 2 + zeros + n;
  }
  p[0] = digits[0];
  p[1] = '.';
  std::memcpy(p + 2, digits + 1, 16);
  p += n > 1 ? n + 1 : 1;
  *p++ = 'e';
  *p++ = sci_exponent < 0 ? '-' : '+';
  if (abs_sci >= 100) {
    *p++ = static_cast<char>('0' + abs_sci / 100);
    std::memcpy(p, kDigitPairs + 2 * (abs_sci % 100), 2);
  } else {
    std::memcpy(p, kDigitPairs + 2 * abs_sci, 2);
  }
  return p + 2;
}

#else

char* write_double(char* p, double v) {
  return std::to_chars(p, p + kMaxDoubleChars, v).ptr;
}

#endif

}  // namespace regiontrace::activation
