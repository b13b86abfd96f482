// An activation-trace JSONL file held in memory for `regiontrace diff`: one
// record per observed tensor, keyed by (module, tensor, step, occurrence),
// with its statistics decoded to numbers or canonical text.
//
// What a line may hold (schema v1 from the activation_trace sink, and the
// records FastVideo's Python hooks write, which lack v/rank/seq):
//   {"v":1,"module":"blocks.3","tensor":"out","step":0,"rank":0,"seq":12,
//    "abs_mean":1.234,"sum":-5.678,"shape":[1,4096,5120],"dtype":"torch.bfloat16"}
// - `module` and `tensor` are required strings; `step` is an integer or null.
// - Every other key is a statistic, except the bookkeeping keys `v`, `rank`,
//   `seq`, `pid`, `ts`, `timestamp`. (`op`, written by the sink's op-level
//   mode, is text and so compared exactly: a check that aligned records are
//   the same aten op.)
// - Non-finite floats are the strings "NaN", "Infinity", "-Infinity"; a stat
//   that failed is a string "<error: ...>".
// - A line with neither `module` nor `tensor` is metadata, such as the sink's
//   closing line {"v":1,"summary":{"records":N,"dropped":N,"rank":R}}; its
//   dropped count (`summary.dropped`, or a top-level `dropped` /
//   `dropped_records`) is reported, not compared.
// - Blank lines are skipped; anything else that does not parse is an error
//   naming file and line.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace regiontrace::cli {

// Interns names (modules, tensors, stat names) so records compare by id; the
// same pool serves both files of a diff, so ids match across them.
class NamePool {
 public:
  NamePool() = default;
  // A copy's map would point into the original's strings; a move keeps the
  // deque's blocks, so the keys stay valid.
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;
  NamePool(NamePool&&) = default;
  NamePool& operator=(NamePool&&) = default;

  std::uint32_t intern(std::string_view name);
  const std::string& name(std::uint32_t id) const { return names_[id]; }
  // Id of a name already interned, or kMissing.
  std::uint32_t find(std::string_view name) const;
  std::size_t size() const { return names_.size(); }

  static constexpr std::uint32_t kMissing = std::numeric_limits<std::uint32_t>::max();

 private:
  std::deque<std::string> names_;  // a deque: the map's keys point into it
  std::unordered_map<std::string_view, std::uint32_t> ids_;
};

enum class StatKind : std::uint8_t {
  kNumber,  // finite or not: "NaN"/"Infinity"/"-Infinity" decode to numbers
  kNull,    // undefined for this tensor (an empty tensor's mean)
  kError,   // the producer failed to compute it: "<error: ...>"
  kText,    // compared exactly: strings, arrays (shape), objects, booleans,
            // integers too large for a double to hold exactly (a hash)
};

// A slice of ActivationTrace::text_arena.
struct TextRef {
  std::uint32_t offset;
  std::uint32_t size;
};

// 16 bytes: a million records of ten statistics stay near 160 MB.
struct StatValue {
  std::uint32_t name = 0;  // in the NamePool
  StatKind kind = StatKind::kNull;
  union {
    double number = 0;  // kNumber
    TextRef text;       // kText, kError
  };
};

inline constexpr std::int64_t kNoStep = std::numeric_limits<std::int64_t>::min();

struct ActivationRecord {
  std::uint32_t module = 0;  // in the NamePool
  std::uint32_t tensor = 0;
  std::int64_t step = kNoStep;
  std::uint32_t occurrence = 0;  // how many earlier records share module/tensor/step
  std::uint32_t line = 0;        // 1-based line in the file
  std::int64_t seq = -1;         // producer's sequence number, -1 when absent
  std::int64_t rank = -1;
  std::uint32_t first_stat = 0;  // stats[first_stat, first_stat + stat_count)
  std::uint32_t stat_count = 0;
};

struct ActivationTrace {
  std::string path;
  // In execution order: by (seq, rank) when every record has a seq, else in
  // file order. Occurrences are counted in this order.
  std::vector<ActivationRecord> records;
  std::vector<StatValue> stats;
  std::string text_arena;
  std::int64_t dropped = 0;  // records the producer reported as dropped
  bool ordered_by_seq = false;

  std::string_view text(const StatValue& v) const {
    return std::string_view(text_arena).substr(v.text.offset, v.text.size);
  }
};

// Reads and decodes a JSONL file (gzip too) in bounded chunks. Throws
// std::runtime_error "path:line: reason" on the first malformed record, and
// "path: ..." for what is no activation trace at all: an empty file, no
// records, a Chrome trace, binary data, a line over 1 MiB.
ActivationTrace load_activation_trace(const std::string& path, NamePool& names);

// Moves a trace loaded with its own pool onto `into`, so two files can be
// loaded on two threads and still compare by id.
void adopt_names(ActivationTrace& trace, const NamePool& from, NamePool& into);

// Gives every record the module name `rename` returns for its current one
// (called once per distinct name): how `diff --strip-prefix/--map` aligns a
// port whose modules are named differently from its reference's.
void rename_modules(ActivationTrace& trace, NamePool& names,
                    const std::function<std::string(const std::string&)>& rename);

std::string format_step(std::int64_t step);

}  // namespace regiontrace::cli
