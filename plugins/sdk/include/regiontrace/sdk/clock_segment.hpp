// One linear piece of the calibrated clock (clock.hpp): readings between its
// anchor and its check point are anchor_ns + (tsc - anchor_tsc) * mult / 2^32.
// Apart from clock.hpp so that a host can read its clock inline in the
// caller's code (regiontrace/detail/region_stack.hpp) without pulling in the
// calibration's headers.
//
// Header-only, not part of the plugin ABI: nothing here crosses the boundary.
#pragma once

#include <cstdint>

namespace regiontrace::sdk::clock {

struct Segment {
  std::uint64_t anchor_tsc = 0;
  std::int64_t anchor_ns = 0;
  std::uint64_t mult = 0;  // ns per tick, 32.32 fixed point
  std::uint64_t next_check_tsc = 0;

  std::int64_t value_at(std::uint64_t t) const {
    // Signed: another thread may have read the TSC just before this
    // segment's anchor. 64-bit arithmetic is exact here: a segment lasts at
    // most clock.hpp's kMaxIntervalNs (with its lead, under 2^30 ns), so
    // |delta * mult| stays under 2^30 ns * 2^32 = 2^62. Half the
    // instructions of a 128-bit product, on every inline clock read.
    const std::int64_t delta = static_cast<std::int64_t>(t - anchor_tsc);
    return anchor_ns + ((delta * static_cast<std::int64_t>(mult)) >> 32);
  }
  // value_at for a reading that may lie anywhere past the segment (a
  // process stopped for hours): the 128-bit product. Out of line only.
  std::int64_t value_at_wide(std::uint64_t t) const {
    // __extension__: this header reaches every program that includes
    // regiontrace.hpp, some built with -Wpedantic -Werror.
    __extension__ typedef __int128 wide;
    const wide delta = static_cast<std::int64_t>(t - anchor_tsc);
    return anchor_ns + static_cast<std::int64_t>((delta * static_cast<wide>(mult)) >> 32);
  }
};

}  // namespace regiontrace::sdk::clock
