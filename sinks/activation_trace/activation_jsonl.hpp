// JSONL schema v1 of the activation trace: one record per observed tensor,
// then one summary line at the end. docs/activation-trace.md describes it.
//
//   {"v":1,"module":"blocks.3","tensor":"out","step":0,"rank":0,"seq":12,
//    "abs_mean":0.79,"sum":-12.5}
//   {"v":1,"module":"blocks.3","tensor":"aten::mm:out","step":0,"rank":0,
//    "seq":13,"op":"aten::mm","abs_mean":...}
//   {"v":1,"summary":{"records":14,"dropped":0,"rank":0}}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "activation_record.hpp"
#include "stat_set.hpp"

namespace regiontrace::activation {

inline constexpr int kSchemaVersion = 1;

struct TraceSummary {
  std::uint64_t records = 0;  // lines written before the summary
  std::uint64_t dropped = 0;  // refused while the queue was full (on_full: drop)
};

class RecordFormatter {
 public:
  RecordFormatter(StatSet stats, int rank);

  // Appends one line, '\n' included.
  void append(std::string& out, const ActivationRecord& record) const;
  void append_summary(std::string& out, const TraceSummary& summary) const;

 private:
  // How a statistic's value is written.
  enum class Kind : std::uint8_t {
    kReal,          // optional double, an error string when `error` is set
    kNumericCount,  // integer, an error string when `error` is set
    kCount,         // integer, always there
    kShape,
    kText,
    kHash,
  };
  // One requested statistic: the constant text before its value, and where
  // the value lives, so that append() reads it without a switch per name.
  struct Field {
    char key[16] = {};  // ,"abs_mean": and padding, copied as one 16-byte move
    std::uint8_t key_size = 0;
    Kind kind = Kind::kReal;
    std::optional<double> TensorStats::*real = nullptr;
    std::int64_t TensorStats::*count = nullptr;
    std::string TensorStats::*text = nullptr;
  };
  // Consecutive fields of one kind, written by one loop: `all` is six runs,
  // its nine doubles one of them.
  struct Run {
    Kind kind;
    std::uint32_t begin;
    std::uint32_t end;
  };

  // Most characters append() can write for the record.
  std::size_t bound(const ActivationRecord& record) const;

  StatSet stats_;
  std::vector<Field> fields_;  // in the order of stats_
  std::vector<Run> runs_;
  std::size_t fixed_bound_ = 0;  // bound() of a record with empty names and texts
  bool has_shape_ = false;
  bool has_text_stats_ = false;  // dtype, device or hash
  std::string prefix_;           // {"v":1,"module":
  std::string rank_;             // ,"rank":N,"seq":
  std::string summary_rank_;     // ,"rank":N
};

}  // namespace regiontrace::activation
