// How the timeline writes each kind of event, shared by the trace written at
// close (trace_builder.cpp) and the flight file kept while the program runs
// (flight_recorder.cpp), so that both say the same thing the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace regiontrace::timeline {

// Step spans sit on a track of their own per thread that set them.
inline constexpr long kStepTrackOffset = 1000000000;
// The deepest nesting the host tracks (ThreadSlot::kMaxDepth).
inline constexpr int kMaxSpanDepth = 256;

class EventFormat {
 public:
  EventFormat(const std::vector<std::string>& region_names, const std::string& span_prefix,
              long pid, std::int64_t base_ns);

  // Each appends one event's JSON object to `out`.
  void process_name(std::string& out, int rank) const;
  void thread_name(std::string& out, long tid, std::string_view name) const;
  void region(std::string& out, long tid, std::uint32_t region, int depth, std::int64_t begin_ns,
              std::int64_t end_ns, std::int64_t step, std::string_view path, bool unwinding,
              bool open_at_end) const;
  // `record`: a MarkRecord and its text.
  void mark(std::string& out, long tid, const unsigned char* record) const;
  void step(std::string& out, long os_tid, std::int64_t step, std::int64_t begin_ns,
            std::int64_t end_ns) const;

  const std::string& region_name(std::uint32_t region) const;
  long pid() const { return pid_; }

 private:
  const std::vector<std::string>& names_;
  std::vector<std::string> span_names_;  // by RegionId, with the prefix
  long pid_;
  std::int64_t base_ns_;
};

// The paths of one thread's spans, read newest first: a region's record
// comes after those of the regions it encloses, so when a span is read its
// enclosing spans were read already (or are still open), and are kept here
// by depth. A region whose enclosing region was not recorded (not
// selected, or dropped) gets the path of the enclosing ones that were.
class SpanPaths {
 public:
  void clear() { stack_.assign(kMaxSpanDepth, Ancestor{}); }
  // A span read (or open): it may enclose the spans read after it.
  void enter(int depth, std::int64_t begin_ns, std::int64_t end_ns, std::uint32_t region);
  // "outer/inner/region": the spans that enclose [begin, end] at lower depths.
  const std::string& path(const EventFormat& format, int depth, std::int64_t begin_ns,
                          std::int64_t end_ns, std::uint32_t region);

 private:
  struct Ancestor {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::uint32_t region = 0;
    bool valid = false;
  };
  std::vector<Ancestor> stack_ = std::vector<Ancestor>(kMaxSpanDepth);
  std::string path_;
};

}  // namespace regiontrace::timeline
