#include "call_records.hpp"

#include <simdjson.h>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace regiontrace::nvtx_record {
namespace {

std::string string_field(simdjson::dom::element e, const char* key) {
  std::string_view v;
  return e[key].get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

template <typename T>
T number_field(simdjson::dom::element e, const char* key) {
  simdjson::dom::element v;
  if (e[key].get(v) != simdjson::SUCCESS) return T{};
  std::int64_t i;
  if (v.get(i) == simdjson::SUCCESS) return static_cast<T>(i);
  std::uint64_t u;
  if (v.get(u) == simdjson::SUCCESS) return static_cast<T>(u);
  return T{};
}

}  // namespace

CallLog read_call_log(const std::vector<std::string>& paths) {
  CallLog log;
  simdjson::dom::parser parser;
  for (const std::string& path : paths) {
    simdjson::padded_string text;
    if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
      throw std::runtime_error("cannot read NVTX records from " + path);
    }
    // One line at a time: a torn last line (a killed process) costs that
    // line only.
    std::string_view all(text.data(), text.size());
    while (!all.empty()) {
      const std::size_t end = all.find('\n');
      const std::string_view line = all.substr(0, end);
      all.remove_prefix(end == std::string_view::npos ? all.size() : end + 1);
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      simdjson::dom::element e;
      if (parser.parse(simdjson::padded_string(line)).get(e) != simdjson::SUCCESS ||
          !e.is_object()) {
        ++log.malformed_lines;
        continue;
      }
      NvtxCall c;
      c.seq = number_field<std::uint64_t>(e, "seq");
      c.pid = number_field<long>(e, "pid");
      c.tid = number_field<long>(e, "tid");
      c.t = number_field<std::int64_t>(e, "t");
      c.kind = string_field(e, "kind");
      c.domain = string_field(e, "domain");
      c.message = string_field(e, "message");
      c.text = string_field(e, "text");
      c.range_id = number_field<std::uint64_t>(e, "range_id");
      c.thread = number_field<std::uint64_t>(e, "thread");
      log.calls.push_back(std::move(c));
    }
  }
  // seq is per process: order by process, then by seq.
  std::stable_sort(log.calls.begin(), log.calls.end(), [](const NvtxCall& a, const NvtxCall& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.seq < b.seq;
  });
  return log;
}

}  // namespace regiontrace::nvtx_record
