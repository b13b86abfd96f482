// What the model sinks (tests/plugins/model_sink.cpp) received, kept in
// memory for the model-based test of the region hot path. One shared
// library, loaded once, holds it for the test program and every model sink
// plugin the host loads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#define REGIONTRACE_JOURNAL_API __attribute__((visibility("default")))

namespace regiontrace::test::journal {

struct Record {
  int sink = 0;   // the model sink's number (model_e1: 1, ... model_s2: 4)
  char kind = 0;  // 'b': on_region_begin, 'e': on_region_end, 's': one span
  std::uint32_t id = 0;
  int depth = 0;
  std::int64_t step = 0;
  std::uint64_t thread = 0;
  bool unwinding = false;
  bool open = false;          // spans: still open when handed over
  bool last_batch = false;    // spans: from the thread's last batch
  std::int64_t time_ns = 0;   // events: the event's time; spans: the end
  std::int64_t begin_ns = 0;  // end events and spans: the begin's time
  std::uint32_t dropped = 0;  // spans: SpanBatch::dropped of its batch
  std::string path;           // events only
};

// Empties the journal. `count_only`: later records are only counted, by
// (sink, kind, id), for runs too long to keep every record.
REGIONTRACE_JOURNAL_API void reset(bool count_only);
REGIONTRACE_JOURNAL_API void add(Record record);
// Drops reported by SpanBatch::dropped, by sink: also counted in count_only.
REGIONTRACE_JOURNAL_API void add_dropped(int sink, std::uint64_t count);
REGIONTRACE_JOURNAL_API std::vector<Record> take();
REGIONTRACE_JOURNAL_API std::map<std::tuple<int, char, std::uint32_t>, std::uint64_t> counts();
REGIONTRACE_JOURNAL_API std::map<int, std::uint64_t> dropped();

}  // namespace regiontrace::test::journal
