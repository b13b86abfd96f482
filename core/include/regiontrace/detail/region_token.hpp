// The layout of a region token: what detail::enter() returns, Region and
// Token keep, and detail::leave() takes back. One 64-bit word, 0 meaning
// "nothing to end":
//
//   bit  63      delivered: a sink got on_region_begin, so the end must ask
//                whether an exception is unwinding
//   bits 40..62  the opening thread's number, 1 .. kMaxTrackedThreads
//   bits  0..39  a per-thread serial (wraps; only the open regions of one
//                thread must differ)
//
// The one definition: the public guard and the dispatcher both read it here.
// A thread whose number would not fit (the 2^23-th thread of a process) is
// not tracked: its regions do nothing and one warning says so; its tokens are
// 0, never a number spilling into the delivered bit.
#pragma once

#include <cstdint>

namespace regiontrace::detail {

inline constexpr unsigned kTokenSerialBits = 40;
inline constexpr unsigned kTokenThreadShift = kTokenSerialBits;
inline constexpr unsigned kTokenThreadBits = 23;
inline constexpr unsigned kTokenDeliveredShift = kTokenThreadShift + kTokenThreadBits;

inline constexpr std::uint64_t kTokenSerialMask = (std::uint64_t{1} << kTokenSerialBits) - 1;
inline constexpr std::uint64_t kTokenThreadMask = ((std::uint64_t{1} << kTokenThreadBits) - 1)
                                                  << kTokenThreadShift;
inline constexpr std::uint64_t kTokenDelivered = std::uint64_t{1} << kTokenDeliveredShift;

// Thread numbers start at 1, so every token of a tracked thread is non-zero.
inline constexpr std::uint64_t kMaxTrackedThreads = (std::uint64_t{1} << kTokenThreadBits) - 1;

static_assert(kTokenDeliveredShift < 64, "the delivered bit must fit in the token");
static_assert((kTokenSerialMask & kTokenThreadMask) == 0, "serial and thread overlap");
static_assert(((kTokenSerialMask | kTokenThreadMask) & kTokenDelivered) == 0,
              "the delivered bit overlaps the serial or the thread number");
static_assert((kTokenSerialMask | kTokenThreadMask | kTokenDelivered) == ~std::uint64_t{0},
              "every bit of a token has one meaning");
static_assert((kMaxTrackedThreads << kTokenThreadShift) == kTokenThreadMask,
              "the largest thread number fills the thread field exactly");

// `thread` must be 1 .. kMaxTrackedThreads.
constexpr std::uint64_t make_region_token(std::uint64_t thread, std::uint64_t serial) {
  return (thread << kTokenThreadShift) | (serial & kTokenSerialMask);
}
constexpr std::uint64_t token_thread(std::uint64_t token) {
  return (token & kTokenThreadMask) >> kTokenThreadShift;
}
constexpr bool token_delivered(std::uint64_t token) {
  return (token & kTokenDelivered) != 0;
}

static_assert(token_thread(make_region_token(kMaxTrackedThreads, ~std::uint64_t{0}) |
                           kTokenDelivered) == kMaxTrackedThreads);
static_assert(!token_delivered(make_region_token(kMaxTrackedThreads, ~std::uint64_t{0})));

}  // namespace regiontrace::detail
