// What goes into a thread's chunks: fixed-size binary records, formatted as
// JSON only at close. A region is the host's finished span, copied from its
// batch: dropping a record drops a whole span, so what is kept always nests.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::timeline {

// A region record is the host's Span itself (32 bytes; `open` is always 0
// in a chunk), so a batch of spans is copied into a chunk whole. A mark
// record starts with kMarkTag where a span has its region id, which no
// region has (ids count up from 0).
using RegionRecord = Span;
static_assert(sizeof(RegionRecord) == 32, "a region record is 32 bytes");
inline constexpr std::uint32_t kMarkTag = 0xFFFFFFFFu;

// Followed by the name and the path (not terminated), padded to 8 bytes.
struct MarkRecord {
  std::uint32_t tag = kMarkTag;
  std::uint32_t size = 0;  // the whole record, text and padding included
  std::int64_t time_ns = 0;
  std::int64_t step = 0;
  std::uint32_t name_length = 0;
  std::uint32_t path_length = 0;
};
static_assert(sizeof(MarkRecord) == 32, "a mark record header is 32 bytes");

inline bool is_mark(const unsigned char* p) {
  std::uint32_t tag;
  std::memcpy(&tag, p, sizeof(tag));
  return tag == kMarkTag;
}

inline std::size_t record_size(const unsigned char* p) {
  return is_mark(p) ? reinterpret_cast<const MarkRecord*>(p)->size : sizeof(RegionRecord);
}

// The earliest time in `bytes` of whole records (a region's begin, a
// mark's time) and how many records they hold: what a full disk's cut needs
// to leave a stored piece out without reading it back.
struct PieceExtent {
  std::int64_t earliest_ns = INT64_MAX;
  std::uint32_t records = 0;
};
inline PieceExtent extent_of(const unsigned char* data, std::size_t bytes) {
  PieceExtent e;
  for (std::size_t at = 0; at < bytes; at += record_size(data + at)) {
    std::int64_t t;
    if (is_mark(data + at)) {
      std::memcpy(&t, data + at + offsetof(MarkRecord, time_ns), sizeof(t));
    } else {
      std::memcpy(&t, data + at + offsetof(RegionRecord, begin_ns), sizeof(t));
    }
    if (t < e.earliest_ns) e.earliest_ns = t;
    ++e.records;
  }
  return e;
}

// One thread's buffer: filled by its thread, handed whole to the writer.
struct Chunk {
  static constexpr std::size_t kBytes = 64 * 1024;
  std::uint64_t slot = 0;  // ThreadSlot::index of the thread that filled it
  // Bytes of whole records; stored (release) after each record, so close()
  // reads only whole records of a chunk its thread is still filling.
  std::atomic<std::uint32_t> used{0};
  alignas(64) unsigned char data[kBytes];
};

}  // namespace regiontrace::timeline
