// The layout of a region token: what detail::enter() returns, Region and
// Token keep, and detail::leave() takes back. One 64-bit word, 0 meaning
// "nothing to end":
//
//   bit   0      delivered: a sink got on_region_begin, so the end must ask
//                whether an exception is unwinding
//   bits  1..23  the opening thread's number, 1 .. kMaxTrackedThreads
//   bits 24..63  a per-thread serial (wraps; only the open regions of one
//                thread must differ)
//
// The serial is on top so that a thread's next token is its last one plus
// kTokenSerialUnit: a wrapping serial overflows out of the word, never into
// the thread's number, and making a token costs one add.
//
// The one definition: the public guard and the dispatcher both read it here.
// A thread whose number would not fit (the 2^23-th thread of a process) is
// not tracked: its regions do nothing and one warning says so; its tokens are
// 0, never a number spilling into the serial.
#pragma once

#include <cstdint>

namespace regiontrace::detail {

inline constexpr unsigned kTokenDeliveredShift = 0;
inline constexpr unsigned kTokenThreadShift = 1;
inline constexpr unsigned kTokenThreadBits = 23;
inline constexpr unsigned kTokenSerialShift = kTokenThreadShift + kTokenThreadBits;
inline constexpr unsigned kTokenSerialBits = 64 - kTokenSerialShift;

inline constexpr std::uint64_t kTokenDelivered = std::uint64_t{1} << kTokenDeliveredShift;
inline constexpr std::uint64_t kTokenThreadMask = ((std::uint64_t{1} << kTokenThreadBits) - 1)
                                                  << kTokenThreadShift;
inline constexpr std::uint64_t kTokenSerialMask = ~std::uint64_t{0} << kTokenSerialShift;
// Adds one to the serial.
inline constexpr std::uint64_t kTokenSerialUnit = std::uint64_t{1} << kTokenSerialShift;

// Thread numbers start at 1, so every token of a tracked thread is non-zero.
inline constexpr std::uint64_t kMaxTrackedThreads = (std::uint64_t{1} << kTokenThreadBits) - 1;

static_assert(kTokenSerialBits == 40, "a serial of 40 bits");
static_assert((kTokenSerialMask & kTokenThreadMask) == 0, "serial and thread overlap");
static_assert(((kTokenSerialMask | kTokenThreadMask) & kTokenDelivered) == 0,
              "the delivered bit overlaps the serial or the thread number");
static_assert((kTokenSerialMask | kTokenThreadMask | kTokenDelivered) == ~std::uint64_t{0},
              "every bit of a token has one meaning");
static_assert((kMaxTrackedThreads << kTokenThreadShift) == kTokenThreadMask,
              "the largest thread number fills the thread field exactly");

// `thread` must be 1 .. kMaxTrackedThreads; each of its tokens is
// next_region_token() of the one before, from first_region_token().
constexpr std::uint64_t first_region_token(std::uint64_t thread) {
  return thread << kTokenThreadShift;
}
constexpr std::uint64_t next_region_token(std::uint64_t last) {
  return last + kTokenSerialUnit;
}
constexpr std::uint64_t token_thread(std::uint64_t token) {
  return (token & kTokenThreadMask) >> kTokenThreadShift;
}
constexpr bool token_delivered(std::uint64_t token) {
  return (token & kTokenDelivered) != 0;
}
// Whether two tokens name the same region, delivered or not.
constexpr bool same_region(std::uint64_t a, std::uint64_t b) {
  return ((a ^ b) & ~kTokenDelivered) == 0;
}

static_assert(token_thread(next_region_token(kTokenSerialMask |
                                             first_region_token(kMaxTrackedThreads)) |
                           kTokenDelivered) == kMaxTrackedThreads,
              "a wrapping serial keeps the thread's number");
static_assert(!token_delivered(next_region_token(first_region_token(kMaxTrackedThreads))));
static_assert(next_region_token(first_region_token(1)) != 0, "a tracked thread's tokens are not 0");

}  // namespace regiontrace::detail
