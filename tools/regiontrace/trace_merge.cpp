#include "trace_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "event_fields.hpp"
#include "event_rewrite.hpp"
#include "gzip_io.hpp"
#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_event.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "trace_event_stream.hpp"

namespace regiontrace::cli {
namespace {

// The second, third ... trace of a rank moves its threads by this much times
// its place. Perfetto reads JSON tids as 32-bit unsigned: real tids (below
// 2^22) and the step tracks (tid + 1e9) moved by up to 9 * 1e8 stay apart
// and below 2^32.
constexpr std::int64_t kTidOffset = 100000000LL;
constexpr std::size_t kMaxTracesPerRank = 9;

using Members = std::vector<std::pair<std::string, std::string>>;

struct Input {
  std::string path;
  std::size_t position = 0;  // on the command line
  TraceIdentity id;
  Members members;
  std::int64_t rank = 0;
  std::string rank_from;
  std::size_t slot = 0;      // position in the output order
  std::size_t in_group = 0;  // 0: the rank's first trace, which keeps its tids
  std::vector<std::int64_t> marks_ns;
  std::optional<std::int64_t> first_ts_ns;
  std::int64_t clock_offset_ns = 0;  // ts (ns) + this = the common axis
  std::int64_t final_offset_ns = 0;  // ts (ns) + this = output ts (ns)
  std::size_t events = 0;
};

struct RankGroup {
  std::int64_t rank = 0;
  std::vector<std::size_t> inputs;  // indices into the input list
  std::vector<std::pair<std::string, std::int64_t>> pids;
  std::unordered_map<std::string, std::int64_t> pid_index;
  std::map<std::string, std::vector<std::string>> process_names;  // original pid -> names (escaped)
  std::int64_t shift_ns = 0;
};

bool is_instant(std::optional<std::string_view> ph) {
  return ph && (*ph == "i" || *ph == "I" || *ph == "R" || *ph == "n");
}

std::string kind_label(const Input& in) {
  return in.id.sink.empty() ? "trace " + std::to_string(in.position + 1) : in.id.sink;
}

bool header_is_enough(const Members& header) {
  for (const auto& [key, text] : header) {
    if (key == "regiontrace" && text.find("\"clockSync\"") != std::string::npos) return true;
  }
  return false;
}

// Reads the header, and the whole input when what merge needs before
// writing (rank, clocks, marks, first event) may lie beyond it.
void probe(Input& in, const MergeOptions& options) {
  TraceEventStream stream(in.path);
  const bool scan =
      !header_is_enough(stream.members()) || !options.align_on_mark.empty() || options.align_starts;
  if (scan) {
    EventFields fields;
    std::string_view event;
    while (stream.next(event)) {
      if (!fields.parse(event)) continue;
      const auto ph = fields.string("ph");
      if (ph && *ph == "M") continue;
      const auto ts = fields.raw("ts");
      if (!ts) continue;
      const auto ns = sdk::units::parse_us(*ts);
      if (!ns) continue;
      if (!in.first_ts_ns || *ns < *in.first_ts_ns) in.first_ts_ns = ns;
      if (!options.align_on_mark.empty() && is_instant(ph) &&
          fields.string("name") == std::optional<std::string_view>(options.align_on_mark)) {
        in.marks_ns.push_back(*ns);
      }
    }
    in.events = stream.events_read();
  }
  in.members = stream.members();
  in.id = identify_trace(in.path, in.members);
}

std::vector<Input> read_inputs(const MergeOptions& options) {
  if (!options.ranks.empty() && options.ranks.size() != options.inputs.size()) {
    throw std::runtime_error("--ranks has " + std::to_string(options.ranks.size()) +
                             " entries for " + std::to_string(options.inputs.size()) + " inputs");
  }
  std::vector<Input> inputs;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    Input in;
    in.path = options.inputs[i];
    in.position = i;
    probe(in, options);
    if (!options.ranks.empty()) {
      in.rank = options.ranks[i];
      in.rank_from = "--ranks";
    } else if (in.id.rank) {
      in.rank = *in.id.rank;
      in.rank_from = in.id.rank_from;
    } else if (auto named = rank_from_file_name(in.path)) {
      in.rank = *named;
      in.rank_from = "file name";
    } else {
      in.rank = static_cast<std::int64_t>(i);
      in.rank_from = "position";
    }
    inputs.push_back(std::move(in));
  }
  std::stable_sort(inputs.begin(), inputs.end(),
                   [](const Input& a, const Input& b) { return a.rank < b.rank; });
  return inputs;
}

// Traces of one rank from different sinks share its process; two from the
// same sink (or of unknown origin) are two ranks given the same number.
std::vector<RankGroup> group_ranks(std::vector<Input>& inputs) {
  std::vector<RankGroup> groups;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Input& in = inputs[i];
    in.slot = i;
    if (groups.empty() || groups.back().rank != in.rank) {
      groups.emplace_back();
      groups.back().rank = in.rank;
    }
    RankGroup& g = groups.back();
    for (std::size_t other : g.inputs) {
      const Input& o = inputs[other];
      if (o.id.sink.empty() || in.id.sink.empty() || o.id.sink == in.id.sink) {
        const std::string what =
            o.id.sink == in.id.sink && !o.id.sink.empty() ? "both " + o.id.sink + " traces" : "";
        throw std::runtime_error("rank " + std::to_string(in.rank) + " twice: " + o.path +
                                 " (from " + o.rank_from + ") and " + in.path + " (from " +
                                 in.rank_from + ")" + (what.empty() ? "" : ", " + what) +
                                 "; name them with --ranks");
      }
    }
    in.in_group = g.inputs.size();
    if (in.in_group >= kMaxTracesPerRank) {
      throw std::runtime_error("rank " + std::to_string(in.rank) + " has more than " +
                               std::to_string(kMaxTracesPerRank) + " traces (" + in.path +
                               " is one too many); merge them in groups");
    }
    g.inputs.push_back(i);
  }
  return groups;
}

// Puts every input on one axis and returns the output's baseTimeNanoseconds.
std::optional<std::int64_t> place_on_clock(std::vector<Input>& inputs, std::string& clock) {
  const bool wall = std::all_of(inputs.begin(), inputs.end(),
                                [](const Input& in) { return in.id.knows_wall_clock(); });
  clock = wall ? "realtime" : "per-trace base";
  std::optional<std::int64_t> origin;
  for (Input& in : inputs) {
    in.clock_offset_ns = wall ? in.id.wall_offset_ns() : in.id.base_ns.value_or(0);
    // Where the input starts on the axis: ts 0 for traces with a base, the
    // first event for those whose ts are absolute.
    const bool absolute = wall ? in.id.ts_is_realtime : !in.id.base_ns;
    std::optional<std::int64_t> start;
    if (!absolute) {
      start = in.clock_offset_ns;
    } else if (wall && in.first_ts_ns) {
      start = *in.first_ts_ns;
    }
    if (start && (!origin || *start < *origin)) origin = start;
  }
  if (!origin) origin = 0;
  for (Input& in : inputs) in.final_offset_ns = in.clock_offset_ns - *origin;
  if (!wall) {
    // The old rule: bases brought to the earliest one, which the output keeps.
    for (const Input& in : inputs) {
      if (in.id.base_ns) return *origin;
    }
    return std::nullopt;
  }
  // ts 0 of the output, in the monotonic clock of the first trace that has
  // one (the conventions' meaning of baseTimeNanoseconds).
  for (const Input& in : inputs) {
    if (in.id.base_ns && in.id.realtime_minus_monotonic_ns) {
      return *origin - *in.id.realtime_minus_monotonic_ns;
    }
  }
  return std::nullopt;
}

void align(std::vector<Input>& inputs, std::vector<RankGroup>& groups,
           const MergeOptions& options) {
  std::vector<std::optional<std::int64_t>> at(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t i : groups[g].inputs) {
      Input& in = inputs[i];
      if (options.align_starts) {
        if (in.first_ts_ns) {
          const std::int64_t t = *in.first_ts_ns + in.final_offset_ns;
          if (!at[g] || t < *at[g]) at[g] = t;
        }
        continue;
      }
      if (at[g] || in.marks_ns.empty()) continue;
      std::sort(in.marks_ns.begin(), in.marks_ns.end());
      const std::size_t n = static_cast<std::size_t>(options.align_occurrence);
      if (in.marks_ns.size() < n) {
        throw std::runtime_error(in.path + ": mark \"" + options.align_on_mark + "\" occurs " +
                                 std::to_string(in.marks_ns.size()) +
                                 " times, --align-on asks for occurrence " + std::to_string(n));
      }
      at[g] = in.marks_ns[n - 1] + in.final_offset_ns;
    }
    if (!at[g] && !options.align_on_mark.empty()) {
      std::string files;
      for (std::size_t i : groups[g].inputs) files += (files.empty() ? "" : ", ") + inputs[i].path;
      throw std::runtime_error("rank " + std::to_string(groups[g].rank) + " (" + files +
                               ") has no instant event (mark) named \"" + options.align_on_mark +
                               "\" to align on");
    }
  }
  // The lowest rank stays; align_starts keeps the earliest start.
  std::optional<std::int64_t> reference;
  for (const auto& t : at) {
    if (!t) continue;
    if (!reference || (options.align_starts && *t < *reference)) reference = t;
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!at[g]) continue;
    groups[g].shift_ns = *reference - *at[g];
    for (std::size_t i : groups[g].inputs) inputs[i].final_offset_ns += groups[g].shift_ns;
  }
}

class StreamingWriter {
 public:
  StreamingWriter(const MergeOptions& options, std::vector<Input>& inputs,
                  std::vector<RankGroup>& groups, std::optional<std::int64_t> base,
                  std::string clock)
      : options_(options),
        inputs_(inputs),
        groups_(groups),
        base_(base),
        clock_(std::move(clock)),
        out_(options.output) {}

  std::size_t write() {
    trace_.begin_document();
    trace_.begin_events(base_);
    for (auto& g : groups_) {
      for (std::size_t i : g.inputs) copy_events(inputs_[i], g);
    }
    for (auto& g : groups_) write_process_metadata(g);
    write_missing_thread_names();
    write_top_level(trace_.end_events());
    trace_.end_document();
    out_.close();
    return trace_.events();
  }

 private:
  void copy_events(Input& in, RankGroup& g) {
    TraceEventStream stream(in.path);
    EventFields fields;
    std::string_view event;
    const EventRewrite rewrite{in.final_offset_ns, in.slot,
                               static_cast<std::int64_t>(in.in_group) * kTidOffset,
                               " (" + kind_label(in) + ")"};
    while (stream.next(event)) {
      if (!fields.parse(event)) {
        throw std::runtime_error(
            in.path + ": event " + std::to_string(stream.events_read() - 1) +
            " is not a well-formed JSON object: " + std::string(event.substr(0, 80)));
      }
      copy_event(fields, g, rewrite);
    }
    in.events = stream.events_read();
    in.members = stream.members();
  }

  // The merged trace's pid for an input's pid (JSON text), numbered in the
  // order first seen.
  std::int64_t pid_of(RankGroup& g, const std::string& pid_text) {
    if (auto found = g.pid_index.find(pid_text); found != g.pid_index.end()) return found->second;
    const std::int64_t pid = next_pid_++;
    g.pid_index.emplace(pid_text, pid);
    g.pids.emplace_back(pid_text, pid);
    return pid;
  }

  void copy_event(const EventFields& fields, RankGroup& g, const EventRewrite& r) {
    const auto ph = fields.string("ph");
    const bool meta = ph && *ph == "M";
    const std::string pid_text(fields.raw("pid").value_or("0"));
    const std::int64_t pid = pid_of(g, pid_text);
    std::optional<std::string_view> name;
    if (meta) name = fields.string("name");
    if (meta && name &&
        (*name == "process_name" || *name == "process_sort_index" || *name == "process_labels")) {
      if (*name == "process_name") remember_process_name(g, pid_text, fields);
      return;  // replaced by the names written at the end
    }
    const bool thread_name = meta && name && *name == "thread_name";
    std::string& o = trace_.begin_event();
    const auto tid_value = write_rewritten_event(o, fields, pid, r, is_instant(ph), thread_name);
    if (r.tid_offset != 0 && tid_value) {
      const auto track = std::make_pair(pid, *tid_value);
      if (thread_name) {
        named_threads_.insert(track);
      } else if (!meta) {
        moved_threads_.emplace(track, r.suffix);
      }
    }
    trace_.end_event();
  }

  static void remember_process_name(RankGroup& g, const std::string& pid_text,
                                    const EventFields& fields) {
    EventFields args;
    const auto raw = fields.raw("args");
    if (!raw || !args.parse(*raw)) return;
    if (auto name = args.string("name")) {
      auto& names = g.process_names[pid_text];
      if (std::find(names.begin(), names.end(), *name) == names.end()) names.emplace_back(*name);
    }
  }

  // `arg_json`: the value of args.<arg_key>, already JSON.
  void write_meta(std::int64_t pid, std::int64_t tid, const char* name, const std::string& arg_key,
                  const std::string& arg_json) {
    sdk::TraceEvent e(trace_.begin_event(), 0, "M", "", name, pid, static_cast<std::uint64_t>(tid));
    e.args().key(arg_key).raw_value(arg_json);
    e.end();
    trace_.end_event();
  }

  void write_process_metadata(const RankGroup& g) {
    const bool several = g.pids.size() > 1;
    std::int64_t order = 0;
    for (const auto& [key, pid] : g.pids) {
      const std::string original =
          key.size() >= 2 && key.front() == '"' ? key.substr(1, key.size() - 2) : key;
      std::string name = "rank " + std::to_string(g.rank) + " (pid " + original + ")";
      auto named = g.process_names.find(key);
      std::string labels;
      if (named != g.process_names.end()) {
        for (const auto& n : named->second) labels += (labels.empty() ? "" : ", ") + n;
      }
      // Several processes in a rank (Kineto's GPU "processes"): their names tell them apart.
      std::string text = "\"" + escaped_content(name);
      if (several && named != g.process_names.end()) text += ": " + named->second.front();
      text += '"';
      write_meta(pid, 0, "process_name", "name", text);
      if (!labels.empty()) write_meta(pid, 0, "process_labels", "labels", "\"" + labels + "\"");
      text.clear();
      json::append_int(text, g.rank * 1000 + order++);
      write_meta(pid, 0, "process_sort_index", "sort_index", text);
    }
  }

  void write_missing_thread_names() {
    for (const auto& [track, suffix] : moved_threads_) {
      if (named_threads_.count(track) > 0) continue;
      std::string text;
      json::append_escaped(text, "thread " + std::to_string(track.second % kTidOffset) + suffix);
      write_meta(track.first, track.second, "thread_name", "name", text);
    }
  }

  void write_top_level(json::Writer& w) {
    // Keys every input has with the same value stay at the top level.
    static const std::set<std::string> kWritten = {"schemaVersion", "displayTimeUnit",
                                                   "baseTimeNanoseconds", "regiontrace"};
    std::map<std::string, std::string> common;
    bool first_input = true;
    for (const auto& in : inputs_) {
      std::map<std::string, std::string> mine(in.members.begin(), in.members.end());
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
      if (kWritten.count(key) == 0) w.key(key).raw_value(text);
    }
    w.key("regiontrace_merge").begin_object().field("clock", clock_);
    if (!options_.align_on_mark.empty()) {
      w.key("align_on").begin_object();
      w.field("mark", options_.align_on_mark).field("occurrence", options_.align_occurrence);
      w.end_object();
    } else if (options_.align_starts) {
      w.field("align_on", "starts");
    }
    w.key("ranks").begin_array();
    for (const auto& g : groups_) {
      const Input& first = inputs_[g.inputs.front()];
      w.begin_object()
          .field("rank", g.rank)
          .field("rank_from", first.rank_from)
          .field("align_shift_us", sdk::units::to_us(g.shift_ns));
      w.key("processes").begin_array();
      for (const auto& [key, pid] : g.pids) {
        w.begin_object().field("pid", pid).key("original_pid").raw_value(key);
        auto named = g.process_names.find(key);
        // As the input wrote it: already escaped.
        if (named != g.process_names.end()) {
          w.key("original_name").raw_value("\"" + std::string(named->second.front()) + "\"");
        }
        w.end_object();
      }
      w.end_array().key("inputs").begin_array();
      for (const std::size_t i : g.inputs) {
        const Input& in = inputs_[i];
        w.begin_object()
            .field("source", in.path)
            .field("sink", in.id.sink)
            .field("tid_offset", static_cast<std::int64_t>(in.in_group) * kTidOffset)
            .field("ts_offset_us", sdk::units::to_us(in.final_offset_ns));
        w.key("metadata").begin_object();
        for (const auto& [key, text] : in.members) {
          if (common.count(key) > 0 && kWritten.count(key) == 0) continue;
          w.key(key).raw_value(text);
        }
        w.end_object().end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().end_object();
  }

 private:
  const MergeOptions& options_;
  std::vector<Input>& inputs_;
  std::vector<RankGroup>& groups_;
  std::optional<std::int64_t> base_;
  std::string clock_;
  OutputFile out_;
  sdk::ChromeTraceWriter trace_{[this](std::string_view text) { out_.write(text); }};
  std::int64_t next_pid_ = 1;
  std::set<std::pair<std::int64_t, std::int64_t>> named_threads_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> moved_threads_;
};

}  // namespace

MergeSummary merge_traces(const MergeOptions& options) {
  if (options.inputs.empty()) throw std::runtime_error("no input traces");
  if (options.align_starts && !options.align_on_mark.empty()) {
    throw std::runtime_error("--align-starts and --align-on exclude each other: choose one");
  }
  if (options.align_occurrence < 1) {
    throw std::runtime_error("--align-occurrence is " + std::to_string(options.align_occurrence) +
                             "; occurrences count from 1");
  }
  // Writing the output would truncate an input still to be read.
  for (const auto& input : options.inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(input, options.output, ec)) {
      throw std::runtime_error("the output " + options.output +
                               " is also an input; write it elsewhere");
    }
  }
  auto inputs = read_inputs(options);
  auto groups = group_ranks(inputs);
  MergeSummary summary;
  const auto base = place_on_clock(inputs, summary.clock);
  if (options.align_starts || !options.align_on_mark.empty()) align(inputs, groups, options);
  StreamingWriter writer(options, inputs, groups, base, summary.clock);
  summary.events_written = writer.write();
  for (const auto& g : groups) {
    MergedRank rank;
    rank.rank = g.rank;
    rank.rank_from = inputs[g.inputs.front()].rank_from;
    rank.pids = g.pids;
    rank.align_shift_us = sdk::units::to_us(g.shift_ns);
    for (std::size_t i : g.inputs) {
      const Input& in = inputs[i];
      rank.inputs.push_back(
          {in.path, in.id.sink, in.events, sdk::units::to_us(in.final_offset_ns)});
    }
    summary.ranks.push_back(std::move(rank));
  }
  return summary;
}

}  // namespace regiontrace::cli
