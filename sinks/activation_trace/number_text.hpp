// Numbers as the activation trace writes them, into a caller's buffer.
//
// write_double writes exactly the text std::to_chars(first, last, v) writes
// (shortest round-trip; plain or exponent form, whichever is shorter, plain
// on a tie), so a reader parses back the same double. With {fmt} at build
// time the shortest digits come from its Dragonbox (~3x faster than
// libstdc++'s to_chars, which was most of a record's formatting); without
// it, from std::to_chars itself. Values whose exact decimal expansion is
// short (bf16 and fp16 values, small integers) need no Dragonbox at all.
#pragma once

#include <cstdint>

namespace regiontrace::activation {

// Most characters write_double writes: "-2.2250738585072014e-308".
inline constexpr int kMaxDoubleChars = 24;
// Bytes from p that write_double may touch: past its text it may leave
// scratch, which whatever is written next overwrites.
inline constexpr int kDoubleScratch = 48;

// v finite. Returns the end of the text; p[0, kDoubleScratch) must be writable.
char* write_double(char* p, double v);

// write_uint for v >= 10.
char* write_uint_from_10(char* p, std::uint64_t v);

// The text std::to_chars writes; p[0, 20) must be writable. Single digits,
// most counts, take no call.
inline char* write_uint(char* p, std::uint64_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  return write_uint_from_10(p, v);
}
inline char* write_int(char* p, std::int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return write_uint(p, 0 - static_cast<std::uint64_t>(v));
  }
  return write_uint(p, static_cast<std::uint64_t>(v));
}

}  // namespace regiontrace::activation
