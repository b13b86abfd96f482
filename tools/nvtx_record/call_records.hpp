// The recording injection's JSONL, read back: one NvtxCall per line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace regiontrace::nvtx_record {

struct NvtxCall {
  std::uint64_t seq = 0;
  long pid = 0;
  long tid = 0;
  std::int64_t t = 0;
  std::string kind;     // push, pop, mark, range_start, range_end, name_thread, ...
  std::string domain;   // "" for NVTX's default domain
  std::string message;  // push, mark, range_start (registered strings resolved)
  std::string text;     // name_thread, name_category, register_string
  std::uint64_t range_id = 0;
  std::uint64_t thread = 0;  // name_thread: the thread named
};

struct CallLog {
  std::vector<NvtxCall> calls;      // sorted by seq
  std::size_t malformed_lines = 0;  // e.g. the last line of a killed process
};

// Reads and merges files (throws std::runtime_error for a file that cannot
// be read); calls come back in `seq` order.
CallLog read_call_log(const std::vector<std::string>& paths);

}  // namespace regiontrace::nvtx_record
