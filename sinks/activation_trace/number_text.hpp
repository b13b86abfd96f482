// Numbers as the activation trace writes them, into a caller's buffer.
//
// write_double writes exactly the text std::to_chars(first, last, v) writes
// (shortest round-trip; plain or exponent form, whichever is shorter, plain
// on a tie), so a reader parses back the same double. With {fmt} at build
// time the shortest digits come from its Dragonbox (~3x faster than
// libstdc++'s to_chars, which was most of a record's formatting); without
// it, from std::to_chars itself.
#pragma once

#include <charconv>
#include <cstdint>

namespace regiontrace::activation {

// Most characters write_double writes: "-2.2250738585072014e-308".
inline constexpr int kMaxDoubleChars = 24;
// Bytes from p that write_double may touch: past its text it may leave
// scratch, which whatever is written next overwrites.
inline constexpr int kDoubleScratch = 48;

// v finite. Returns the end of the text; p[0, kDoubleScratch) must be writable.
char* write_double(char* p, double v);

inline char* write_int(char* p, std::int64_t v) {
  return std::to_chars(p, p + 20, v).ptr;
}
inline char* write_uint(char* p, std::uint64_t v) {
  return std::to_chars(p, p + 20, v).ptr;
}

}  // namespace regiontrace::activation
