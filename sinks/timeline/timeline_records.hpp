// What the application threads write into their buffers: fixed-size binary
// records, formatted as JSON only by the writer. A region is recorded once,
// when it ends, as a complete span (the end event carries its begin time):
// dropping a record drops a whole span, so what is kept always nests.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace regiontrace::timeline {

enum class RecordKind : std::uint8_t { kRegion = 1, kMark = 2 };

struct RegionRecord {
  RecordKind kind = RecordKind::kRegion;
  std::uint8_t unwinding = 0;
  std::uint16_t depth = 0;
  std::uint32_t region = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = 0;
};
static_assert(sizeof(RegionRecord) == 32, "a region record is 32 bytes");

// Followed by the name and the path (not terminated), padded to 8 bytes.
struct MarkRecord {
  RecordKind kind = RecordKind::kMark;
  std::uint8_t unused = 0;
  std::uint16_t depth = 0;
  std::uint32_t size = 0;  // the whole record, text and padding included
  std::int64_t time_ns = 0;
  std::int64_t step = 0;
  std::uint32_t name_length = 0;
  std::uint32_t path_length = 0;
};
static_assert(sizeof(MarkRecord) == 32, "a mark record header is 32 bytes");

inline std::size_t record_size(const unsigned char* p) {
  return *reinterpret_cast<const RecordKind*>(p) == RecordKind::kRegion
             ? sizeof(RegionRecord)
             : reinterpret_cast<const MarkRecord*>(p)->size;
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
