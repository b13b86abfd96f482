#include "number_text.hpp"

#include <charconv>
#include <cstring>

#if defined(REGIONTRACE_HAVE_FMT)
// Dragonbox's whole table of powers of ten (~10 KB) instead of one entry in
// 27 and a 128-bit multiplication to recover the others: a third fewer
// instructions per double. This file is the only user of {fmt} here, and
// either table gives the same digits.
#define FMT_USE_FULL_CACHE_DRAGONBOX 1
#include <fmt/format.h>
#endif

namespace regiontrace::activation {
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
inline int digit_count(std::uint64_t v) {
  const int bits = 64 - __builtin_clzll(v);
  const int guess = (bits * 1233) >> 12;
  return guess + (v >= kPowersOfTen[guess] ? 1 : 0);
}

// The eight decimal digits of v < 10^8, leading zeros included, as a word
// whose bytes from the least significant up are the digits in order: a few
// multiplications instead of a loop of divisions (the technique of Khuong
// and Lemire's integer printing).
inline std::uint64_t eight_digits(std::uint32_t v) {
  const std::uint64_t merged = (v / 10000) | (static_cast<std::uint64_t>(v % 10000) << 32);
  const std::uint64_t hundreds_hi = ((merged * 10486) >> 20) & ((0x7Full << 32) | 0x7Full);
  const std::uint64_t hundreds_lo = merged - 100 * hundreds_hi;
  const std::uint64_t hundreds = (hundreds_lo << 16) + hundreds_hi;
  std::uint64_t tens = (hundreds * 103) >> 10;
  tens &= (0xFull << 48) | (0xFull << 32) | (0xFull << 16) | 0xFull;
  tens += (hundreds - 10 * tens) << 8;
  return tens + 0x3030303030303030ull;
}

// Stores the 8 bytes of an eight_digits() word at p, first digit first.
inline void store_digits(char* p, std::uint64_t word) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  std::memcpy(p, &word, 8);
}

// Two digits as a word whose low byte is the first.
inline std::uint32_t digit_pair(std::uint32_t v) {
  std::uint16_t pair;
  std::memcpy(&pair, kDigitPairs + 2 * v, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  pair = __builtin_bswap16(pair);
#endif
  return pair;
}

// The n digits of v < 10^8 as in eight_digits(), without its leading zeros.
inline std::uint64_t digit_word(std::uint32_t v, int n) {
  if (n <= 4) {
    // Two digit pairs are cheaper than the eight-digit word.
    return (digit_pair(v / 100) | digit_pair(v % 100) << 16) >> (8 * (4 - n));
  }
  return eight_digits(v) >> (8 * (8 - n));
}

// Stores the bytes of a word of digits at p, first digit first.
inline void store_text(char* p, std::uint64_t text) {
  store_digits(p, text);
}
inline void store_text(char* p, unsigned __int128 text) {
  store_digits(p, static_cast<std::uint64_t>(text));
  store_digits(p + 8, static_cast<std::uint64_t>(text >> 64));
}

// v < 10^8, n its digit count: writes 8 bytes at p, the digits first.
inline void write_short(char* p, std::uint32_t v, int n) {
  store_digits(p, digit_word(v, n));
}

}  // namespace

char* write_uint_from_10(char* p, std::uint64_t v) {
  const int n = digit_count(v);
  if (n <= 8) {
    write_short(p, static_cast<std::uint32_t>(v), n);
    return p + n;
  }
  const std::uint64_t high = v / 100000000;
  char* q = p;
  if (n <= 16) {
    write_short(q, static_cast<std::uint32_t>(high), n - 8);
    q += n - 8;
  } else {
    write_short(q, static_cast<std::uint32_t>(high / 100000000), n - 16);
    q += n - 16;
    store_digits(q, eight_digits(static_cast<std::uint32_t>(high % 100000000)));
    q += 8;
  }
  store_digits(q, eight_digits(static_cast<std::uint32_t>(v % 100000000)));
  return p + n;
}

#if defined(REGIONTRACE_HAVE_FMT)
namespace {

// Largest m with m * 5^k < 10^15, for k in [0, 21].
constexpr std::uint64_t kExactLimit[] = {999999999999999ull,
                                         199999999999999ull,
                                         39999999999999ull,
                                         7999999999999ull,
                                         1599999999999ull,
                                         319999999999ull,
                                         63999999999ull,
                                         12799999999ull,
                                         2559999999ull,
                                         511999999ull,
                                         102399999ull,
                                         20479999ull,
                                         4095999ull,
                                         819199ull,
                                         163839ull,
                                         32767ull,
                                         6553ull,
                                         1310ull,
                                         262ull,
                                         52ull,
                                         10ull,
                                         2ull};
constexpr std::uint64_t kPowersOfFive[] = {1ull,
                                           5ull,
                                           25ull,
                                           125ull,
                                           625ull,
                                           3125ull,
                                           15625ull,
                                           78125ull,
                                           390625ull,
                                           1953125ull,
                                           9765625ull,
                                           48828125ull,
                                           244140625ull,
                                           1220703125ull,
                                           6103515625ull,
                                           30517578125ull,
                                           152587890625ull,
                                           762939453125ull,
                                           3814697265625ull,
                                           19073486328125ull,
                                           95367431640625ull,
                                           476837158203125ull};

// v an integer below 10^22: of the texts as short as the shortest, to_chars
// writes the nearest, its exact digits. Rare, and apart so that
// write_decimal needs no registers saved.
[[gnu::noinline]] char* write_integer(char* p, double v) {
  if (v < 18446744073709551616.0) return write_uint(p, static_cast<std::uint64_t>(v));
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

// Writes the digits of `text` (count of them, first in its lowest byte,
// after `lead` when that is not 0) in the form chosen by write_decimal.
// The digits stay in registers up to their final stores: read back from a
// buffer, they cost a stalled store-to-load forwarding each time.
template <typename Text>
inline char* write_form(char* p, Text text, int count, char lead, int exponent, int sci_exponent,
                        int longer_sci) {
  if (exponent == 0) {
    if (lead != 0) *p++ = lead;
    store_text(p, text);
    return p + count;
  }
  if (exponent < 0 && sci_exponent >= 0) {  // dd.ddd
    int whole = sci_exponent + 1;
    if (lead != 0) {
      *p++ = lead;
      --whole;
    }
    store_text(p, text);
    store_text(p + whole + 1, text >> (8 * whole));
    p[whole] = '.';
    return p + count + 1;
  }
  if (exponent < 0 && sci_exponent >= -3 - longer_sci) {
    // 0.000ddd: at most three zeros after the point, or d.ddde-XX is shorter.
    std::memcpy(p, "0.000", 5);
    p += 1 - sci_exponent;
    if (lead != 0) *p++ = lead;
    store_text(p, text);
    return p + count;
  }
  if (lead != 0) {
    p[0] = lead;
    p[1] = '.';
    store_text(p + 2, text);
    p += 2 + count;
  } else {
    p[0] = static_cast<char>(text);
    p[1] = '.';
    store_text(p + 2, text >> 8);
    p += count > 1 ? count + 1 : 1;
  }
  const int abs_sci = sci_exponent < 0 ? -sci_exponent : sci_exponent;
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

// write_decimal's significands of 9 to 17 digits: apart, as their 128-bit
// words would cost the shorter ones registers saved and restored.
[[gnu::noinline]] char* write_long(char* p, std::uint64_t significand, int n, int exponent,
                                   int sci_exponent, int longer_sci) {
  const std::uint64_t high = significand / 100000000;
  const std::uint64_t low = eight_digits(static_cast<std::uint32_t>(significand % 100000000));
  if (n <= 16) {
    const unsigned __int128 text = digit_word(static_cast<std::uint32_t>(high), n - 8) |
                                   static_cast<unsigned __int128>(low) << (8 * (n - 8));
    return write_form(p, text, n, 0, exponent, sci_exponent, longer_sci);
  }
  // The 17th digit of the longest significands goes first, on its own.
  const unsigned __int128 text = eight_digits(static_cast<std::uint32_t>(high % 100000000)) |
                                 static_cast<unsigned __int128>(low) << 64;
  return write_form(p, text, 16, static_cast<char>('0' + high / 100000000), exponent, sci_exponent,
                    longer_sci);
}

// v > 0 is significand * 10^exponent, its shortest digits (trailing zeros
// removed): writes them as to_chars does. Apart from write_double, so that
// the latter keeps few registers across its call to Dragonbox.
//
// Stores are of whole words, never of the digits' own length (those were
// calls to memcpy, a fifth of a record's instructions): they may write past
// the text (kDoubleScratch).
[[gnu::noinline]] char* write_decimal(char* p, std::uint64_t significand, int exponent, double v) {
  const int n = digit_count(significand);     // at most 17
  const int sci_exponent = exponent + n - 1;  // d.ddd e<sci_exponent>
  // Which form to_chars writes, plain on a tie: plain while it is at most
  // as long as d.ddde+XX, the lengths compared once and for all per case.
  const int longer_sci = n > 1 ? 1 : 0;  // the exponent form's '.'
  if (exponent > 0 && exponent <= 4 + longer_sci) return write_integer(p, v);
  if (n <= 8) {  // most values: one 64-bit word
    return write_form(p, digit_word(static_cast<std::uint32_t>(significand), n), n, 0, exponent,
                      sci_exponent, longer_sci);
  }
  return write_long(p, significand, n, exponent, sci_exponent, longer_sci);
}

}  // namespace

char* write_double(char* p, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if (bits >> 63 != 0) {
    *p++ = '-';
    bits &= ~(1ull << 63);
    v = -v;
  }
  if (bits == 0) {
    *p++ = '0';
    return p;
  }
  const int biased = static_cast<int>(bits >> 52);
  const std::uint64_t mantissa = (bits & ((1ull << 52) - 1)) | (1ull << 52);
  const int zeros = __builtin_ctzll(mantissa);
  // v = (mantissa >> zeros) / 2^fraction_bits; for a subnormal (biased 0,
  // no implicit bit) fraction_bits is over 1000, outside the range below.
  const int fraction_bits = 1075 - biased - zeros;
  if (static_cast<unsigned>(fraction_bits - 1) < 21u &&
      (mantissa >> zeros) <= kExactLimit[fraction_bits]) {
    // Fewer than 16 significant digits written out exactly (bf16 and fp16
    // values, short binary fractions): no other decimal that short reads
    // back as v (15-digit decimals survive the trip through a double), so
    // these exact digits are the shortest, and cost a multiplication
    // instead of Dragonbox.
    return write_decimal(p, (mantissa >> zeros) * kPowersOfFive[fraction_bits], -fraction_bits, v);
  }
  if (fraction_bits <= 0 && v < 100000.0) {
    // Small integers: plain text is never longer than the exponent form.
    return write_uint(p, static_cast<std::uint64_t>(v));
  }
  const auto decimal = fmt::detail::dragonbox::to_decimal(v);
  return write_decimal(p, decimal.significand, decimal.exponent, v);
}

#else

char* write_double(char* p, double v) {
  return std::to_chars(p, p + kMaxDoubleChars, v).ptr;
}

#endif

}  // namespace regiontrace::activation
