#include "trace_merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "chrome_trace_reader.hpp"
#include "dom_json_writer.hpp"
#include "gzip_io.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::cli {

std::optional<std::int64_t> rank_from_file_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  static const std::regex pattern("rank[-_]?([0-9]+)", std::regex::icase);
  std::optional<std::int64_t> rank;
  for (std::sregex_iterator it(name.begin(), name.end(), pattern), end; it != end; ++it) {
    rank = std::stoll((*it)[1].str());
  }
  return rank;
}

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Ids below 2^40 are shifted by rank slot * 2^40 to keep ranks' flows apart
// while staying below 2^53, where JSON readers still hold integers exactly.
constexpr int kIdShift = 40;
constexpr std::uint64_t kIdLimit = std::uint64_t{1} << kIdShift;

struct RankInput {
  std::string path;
  std::int64_t rank = 0;
  std::string rank_from;
  std::size_t slot = 0;  // position in rank order
  ChromeTrace trace;
  std::optional<std::int64_t> base_ns;
  double ts_offset_us = 0;
  // Original pid (canonical JSON text) -> new pid, in order of first appearance.
  std::vector<std::pair<std::string, std::int64_t>> pids;
  std::unordered_map<std::string, std::int64_t> pid_index;
  std::map<std::string, std::string> process_names;  // original pid -> name
};

std::string pid_key(object event) {
  element pid;
  if (event["pid"].get(pid)) return "0";  // Chrome's reading of an event without pid
  std::string key;
  append_json(key, pid);
  return key;
}

bool is_meta(object event, std::string_view name) {
  return string_field(event, "ph") == std::optional<std::string_view>("M") &&
         string_field(event, "name") == std::optional<std::string_view>(name);
}

// The rank a trace states about itself: the torch_profiler sink writes
// {"regiontrace":{"rank":R,...}}, Kineto {"distributedInfo":{"rank":R,...}}.
std::optional<std::pair<std::int64_t, std::string>> rank_from_metadata(const ChromeTrace& trace) {
  if (!trace.top_level()) return std::nullopt;
  for (const char* key : {"regiontrace", "distributedInfo"}) {
    object info;
    if ((*trace.top_level())[key].get_object().get(info)) continue;
    if (auto rank = integer_field(info, "rank")) return std::make_pair(*rank, std::string(key));
  }
  return std::nullopt;
}

std::vector<RankInput> load_inputs(const MergeOptions& options) {
  if (!options.ranks.empty() && options.ranks.size() != options.inputs.size()) {
    throw std::runtime_error("--ranks has " + std::to_string(options.ranks.size()) +
                             " entries for " + std::to_string(options.inputs.size()) + " inputs");
  }
  std::vector<RankInput> inputs;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    RankInput in;
    in.path = options.inputs[i];
    in.trace = ChromeTrace::load(in.path);
    if (!options.ranks.empty()) {
      in.rank = options.ranks[i];
      in.rank_from = "--ranks";
    } else if (auto stated = rank_from_metadata(in.trace)) {
      in.rank = stated->first;
      in.rank_from = stated->second;
    } else if (auto named = rank_from_file_name(in.path)) {
      in.rank = *named;
      in.rank_from = "file name";
    } else {
      in.rank = static_cast<std::int64_t>(i);
      in.rank_from = "position";
    }
    if (in.trace.top_level()) {
      in.base_ns = integer_field(*in.trace.top_level(), "baseTimeNanoseconds");
    }
    inputs.push_back(std::move(in));
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].slot = i;
    if (i > 0 && inputs[i].rank == inputs[i - 1].rank) {
      throw std::runtime_error("rank " + std::to_string(inputs[i].rank) +
                               " twice: " + inputs[i - 1].path + " (from " +
                               inputs[i - 1].rank_from + ") and " + inputs[i].path + " (from " +
                               inputs[i].rank_from + "); name them with --ranks");
    }
  }
  return inputs;
}

// Gives every (rank, original pid) a new pid, and learns original names.
void assign_pids(std::vector<RankInput>& inputs) {
  std::int64_t next_pid = 1;
  for (auto& in : inputs) {
    for (element e : in.trace.events()) {
      object event;
      if (e.get_object().get(event)) continue;
      std::string key = pid_key(event);
      if (in.pid_index.count(key) == 0) {
        in.pid_index.emplace(key, next_pid);
        in.pids.emplace_back(key, next_pid);
        ++next_pid;
      }
      if (is_meta(event, "process_name")) {
        object args;
        if (!event["args"].get_object().get(args)) {
          if (auto name = string_field(args, "name")) in.process_names[key] = std::string(*name);
        }
      }
    }
  }
}

double first_timestamp(const RankInput& in) {
  double first = std::numeric_limits<double>::infinity();
  for (element e : in.trace.events()) {
    object event;
    if (e.get_object().get(event) || is_meta(event, "process_name")) continue;
    if (string_field(event, "ph") == std::optional<std::string_view>("M")) continue;
    if (auto ts = number_field(event, "ts")) first = std::min(first, *ts + in.ts_offset_us);
  }
  return first;
}

void compute_offsets(std::vector<RankInput>& inputs, bool align_starts) {
  std::optional<std::int64_t> base;
  for (const auto& in : inputs) {
    if (in.base_ns && (!base || *in.base_ns < *base)) base = in.base_ns;
  }
  for (auto& in : inputs) {
    if (base) in.ts_offset_us = static_cast<double>(in.base_ns.value_or(0) - *base) / 1000.0;
  }
  if (!align_starts) return;
  std::vector<double> starts;
  double earliest = std::numeric_limits<double>::infinity();
  for (const auto& in : inputs) {
    starts.push_back(first_timestamp(in));
    earliest = std::min(earliest, starts.back());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (std::isfinite(starts[i])) inputs[i].ts_offset_us += earliest - starts[i];
  }
}

class MergedWriter {
 public:
  MergedWriter(const MergeOptions& options, std::vector<RankInput>& inputs)
      : out_(options.output), inputs_(inputs) {}

  std::size_t write() {
    std::string& o = out_.buffer();
    o += "{\"traceEvents\":[\n";
    for (const auto& in : inputs_) write_process_metadata(in);
    for (auto& in : inputs_) {
      for (element e : in.trace.events()) {
        object event;
        if (e.get_object().get(event)) continue;  // not an event: Chrome ignores it too
        // Replaced by the names and order written above.
        if (is_meta(event, "process_name") || is_meta(event, "process_sort_index")) continue;
        if (is_meta(event, "process_labels")) continue;
        begin_event();
        write_event(in, event);
        out_.maybe_flush();
      }
    }
    o += "\n]";
    write_top_level();
    o += "}\n";
    out_.close();
    return events_;
  }

 private:
  void begin_event() {
    if (events_++ > 0) out_.buffer() += ",\n";
  }

  void write_meta(std::int64_t pid, const char* name, const std::string& arg_key,
                  const std::string& arg_json) {
    begin_event();
    std::string& o = out_.buffer();
    o += "{\"ph\":\"M\",\"name\":\"";
    o += name;
    o += "\",\"pid\":";
    json::append_int(o, pid);
    o += ",\"tid\":0,\"args\":{";
    json::append_escaped(o, arg_key);
    o += ':';
    o += arg_json;
    o += "}}";
  }

  void write_process_metadata(const RankInput& in) {
    const bool several = in.pids.size() > 1;
    std::int64_t order = 0;
    for (const auto& [key, pid] : in.pids) {
      auto named = in.process_names.find(key);
      const std::string original = named != in.process_names.end() ? named->second : "pid " + key;
      std::string name = "rank " + std::to_string(in.rank);
      if (several) name += ": " + original;
      std::string text;
      json::append_escaped(text, name);
      write_meta(pid, "process_name", "name", text);
      text.clear();
      json::append_escaped(text, original);
      write_meta(pid, "process_labels", "labels", text);
      text.clear();
      json::append_int(text, in.rank * 1000 + order++);
      write_meta(pid, "process_sort_index", "sort_index", text);
    }
  }

  void write_event(const RankInput& in, object event) {
    std::string& o = out_.buffer();
    const auto ph = string_field(event, "ph");
    const bool instant =
        ph == std::optional<std::string_view>("i") || ph == std::optional<std::string_view>("I");
    const std::string key = pid_key(event);
    o += "{\"pid\":";
    json::append_int(o, in.pid_index.at(key));
    for (auto field : event) {
      if (field.key == "pid") continue;
      o += ',';
      json::append_escaped(o, field.key);
      o += ':';
      if (field.key == "ts" && in.ts_offset_us != 0 && is_number(field.value)) {
        json::append_double(o, to_double(field.value) + in.ts_offset_us);
      } else if ((field.key == "id" || field.key == "bind_id") && in.slot > 0) {
        write_id(o, field.value, in.slot);
      } else if (field.key == "s" && instant && field.value.type() == element_type::STRING &&
                 std::string_view(field.value) == "g") {
        o += "\"p\"";
      } else {
        append_json(o, field.value);
      }
    }
    o += '}';
  }

  static bool is_number(element v) {
    const auto t = v.type();
    return t == element_type::DOUBLE || t == element_type::INT64 || t == element_type::UINT64;
  }
  static double to_double(element v) {
    switch (v.type()) {
      case element_type::INT64:
        return double(int64_t(v));
      case element_type::UINT64:
        return double(uint64_t(v));
      default:
        return double(v);
    }
  }

  // Flow/async ids: integers or hex strings ("0x1f"), as Chrome reads them.
  static void write_id(std::string& o, element id, std::size_t slot) {
    const std::uint64_t shift = static_cast<std::uint64_t>(slot) << kIdShift;
    if (id.type() == element_type::INT64 && int64_t(id) >= 0 &&
        static_cast<std::uint64_t>(int64_t(id)) < kIdLimit) {
      json::append_uint(o, static_cast<std::uint64_t>(int64_t(id)) + shift);
      return;
    }
    if (id.type() == element_type::UINT64 && uint64_t(id) < kIdLimit) {
      json::append_uint(o, uint64_t(id) + shift);
      return;
    }
    if (id.type() == element_type::STRING) {
      const std::string text{std::string_view(id)};
      const bool hex_prefix = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
      const std::string digits = hex_prefix ? text.substr(2) : text;
      char* end = nullptr;
      const unsigned long long value = std::strtoull(digits.c_str(), &end, 16);
      if (!digits.empty() && *end == '\0' && value < kIdLimit) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "\"0x%llx\"",
                      static_cast<unsigned long long>(value + shift));
        o += buf;
        return;
      }
    }
    append_json(o, id);  // beyond the shifted range: left as it was
  }

  void write_top_level() {
    std::string& o = out_.buffer();
    // Keys every input has with the same value stay at the top level.
    std::map<std::string, std::string> common;
    bool first_input = true;
    for (const auto& in : inputs_) {
      std::map<std::string, std::string> mine;
      if (in.trace.top_level()) {
        for (auto field : *in.trace.top_level()) {
          if (field.key == "traceEvents" || field.key == "baseTimeNanoseconds") continue;
          std::string text;
          append_json(text, field.value);
          mine.emplace(std::string(field.key), std::move(text));
        }
      }
      if (first_input) {
        common = std::move(mine);
        first_input = false;
        continue;
      }
      for (auto it = common.begin(); it != common.end();) {
        auto found = mine.find(it->first);
        it = (found == mine.end() || found->second != it->second) ? common.erase(it) : ++it;
      }
    }
    for (const auto& [key, text] : common) {
      o += ',';
      json::append_escaped(o, key);
      o += ':';
      o += text;
    }
    std::optional<std::int64_t> base;
    for (const auto& in : inputs_) {
      if (in.base_ns && (!base || *in.base_ns < *base)) base = in.base_ns;
    }
    if (base) {
      o += ",\"baseTimeNanoseconds\":";
      json::append_int(o, *base);
    }
    o += ",\"regiontrace_merge\":{\"ranks\":[";
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const auto& in = inputs_[i];
      if (i > 0) o += ',';
      o += "{\"rank\":";
      json::append_int(o, in.rank);
      o += ",\"rank_from\":";
      json::append_escaped(o, in.rank_from);
      o += ",\"source\":";
      json::append_escaped(o, in.path);
      o += ",\"ts_offset_us\":";
      json::append_double(o, in.ts_offset_us);
      o += ",\"processes\":[";
      for (std::size_t p = 0; p < in.pids.size(); ++p) {
        const auto& [key, pid] = in.pids[p];
        if (p > 0) o += ',';
        o += "{\"pid\":";
        json::append_int(o, pid);
        o += ",\"original_pid\":";
        o += key;
        auto named = in.process_names.find(key);
        if (named != in.process_names.end()) {
          o += ",\"original_name\":";
          json::append_escaped(o, named->second);
        }
        o += '}';
      }
      o += "],\"metadata\":{";
      bool first = true;
      if (in.trace.top_level()) {
        for (auto field : *in.trace.top_level()) {
          if (field.key == "traceEvents" || common.count(std::string(field.key)) > 0) continue;
          if (!first) o += ',';
          first = false;
          json::append_escaped(o, field.key);
          o += ':';
          append_json(o, field.value);
        }
      }
      o += "}}";
    }
    o += "]}";
  }

  OutputFile out_;
  std::vector<RankInput>& inputs_;
  std::size_t events_ = 0;
};

}  // namespace

MergeSummary merge_traces(const MergeOptions& options) {
  if (options.inputs.empty()) throw std::runtime_error("no input traces");
  auto inputs = load_inputs(options);
  assign_pids(inputs);
  compute_offsets(inputs, options.align_starts);
  MergeSummary summary;
  summary.events_written = MergedWriter(options, inputs).write();
  for (const auto& in : inputs) {
    MergedRank rank;
    rank.rank = in.rank;
    rank.source = in.path;
    rank.rank_from = in.rank_from;
    rank.events = in.trace.events().size();
    rank.pids = in.pids;
    summary.ranks.push_back(std::move(rank));
  }
  return summary;
}

}  // namespace regiontrace::cli
