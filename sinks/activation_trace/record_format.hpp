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
  // Most characters append() can write for the record.
  std::size_t bound(const ActivationRecord& record) const;
  // Writes one statistic's value at p; returns its end.
  char* append_stat(char* p, Stat stat, const TensorStats& s) const;

  StatSet stats_;
  std::vector<std::string> keys_;  // ,"abs_mean": per requested statistic
  std::size_t fixed_bound_ = 0;    // bound() of a record with empty names and texts
  bool has_shape_ = false;
  bool has_text_stats_ = false;  // dtype, device or hash
  std::string prefix_;           // {"v":1,"module":
  std::string rank_;             // ,"rank":N,"seq":
  std::string summary_rank_;     // ,"rank":N
};

}  // namespace regiontrace::activation
