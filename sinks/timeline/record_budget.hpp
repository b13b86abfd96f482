// The max_events / max_mb caps, applied record by record as chunks are
// kept (by the writer thread, then by close() for the chunks threads were
// still filling): what passes a cap is dropped whole and counted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "timeline_records.hpp"

namespace regiontrace::timeline {

class RecordBudget {
 public:
  RecordBudget(std::uint64_t max_events, std::uint64_t max_bytes)
      : events_left_(max_events), bytes_left_(max_bytes) {}

  // How many of `used` bytes of whole records fit; counts the records kept
  // and dropped.
  std::size_t keep(const unsigned char* data, std::size_t used) {
    std::size_t at = 0;
    while (at < used) {
      const std::size_t n = record_size(data + at);
      if (events_left_ == 0 || bytes_left_ < n) break;
      --events_left_;
      bytes_left_ -= n;
      ++kept_;
      at += n;
    }
    return at;
  }
  // Counts the records from `from` to `used` as dropped.
  void drop_rest(const unsigned char* data, std::size_t from, std::size_t used) {
    for (std::size_t at = from; at < used; at += record_size(data + at)) ++dropped_;
  }
  std::uint64_t kept() const { return kept_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::uint64_t events_left_;
  std::uint64_t bytes_left_;
  std::uint64_t kept_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace regiontrace::timeline
