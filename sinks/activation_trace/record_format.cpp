#include "record_format.hpp"

#include <optional>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::activation {
namespace {

void append_optional(std::string& out, const std::optional<double>& v) {
  if (v) {
    json::append_double(out, *v);
  } else {
    out += "null";
  }
}

// Names seldom need escaping: copy them whole when they do not.
void append_name(std::string& out, std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') {
      json::append_escaped(out, s);
      return;
    }
  }
  out += '"';
  out.append(s);
  out += '"';
}

void append_error(std::string& out, const std::string& error) {
  json::append_escaped(out, "<error: " + error + ">");
}

void append_hex(std::string& out, std::uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  char buf[18];
  buf[0] = '"';
  for (int i = 0; i < 16; ++i) buf[16 - i] = kHex[(v >> (4 * i)) & 0xF];
  buf[17] = '"';
  out.append(buf, sizeof(buf));
}

}  // namespace

RecordFormatter::RecordFormatter(StatSet stats, int rank) : stats_(std::move(stats)) {
  prefix_ = "{\"v\":" + std::to_string(kSchemaVersion) + ",\"module\":";
  summary_rank_ = ",\"rank\":" + std::to_string(rank);
  rank_ = summary_rank_ + ",\"seq\":";
  for (Stat stat : stats_.order()) keys_.push_back(",\"" + std::string(stat_name(stat)) + "\":");
}

void RecordFormatter::append(std::string& out, const ActivationRecord& r) const {
  out += prefix_;
  append_name(out, r.module());
  out += ",\"tensor\":";
  append_name(out, r.tensor());
  out += ",\"step\":";
  if (r.step == kNoStep) {
    out += "null";
  } else {
    json::append_int(out, r.step);
  }
  out += rank_;
  json::append_uint(out, r.seq);
  if (!r.op().empty()) {
    out += ",\"op\":";
    append_name(out, r.op());
  }
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    out += keys_[i];
    append_stat(out, stats_.order()[i], r.stats);
  }
  out += "}\n";
}

void RecordFormatter::append_stat(std::string& out, Stat stat, const TensorStats& s) const {
  switch (stat) {
    case Stat::kNumel:
      return json::append_int(out, s.numel);
    case Stat::kShape:
      out += '[';
      for (std::size_t i = 0; i < s.shape.size(); ++i) {
        if (i != 0) out += ',';
        json::append_int(out, s.shape[i]);
      }
      out += ']';
      return;
    case Stat::kDtype:
      return json::append_escaped(out, s.dtype);
    case Stat::kDevice:
      return json::append_escaped(out, s.device);
    case Stat::kHash:
      if (s.hash) return append_hex(out, *s.hash);
      return append_error(out, s.hash_error.empty() ? "no hash" : s.hash_error);
    default:
      break;
  }
  if (!s.error.empty()) return append_error(out, s.error);
  switch (stat) {
    case Stat::kSum:
      return append_optional(out, s.sum);
    case Stat::kMean:
      return append_optional(out, s.mean);
    case Stat::kAbsMean:
      return append_optional(out, s.abs_mean);
    case Stat::kMin:
      return append_optional(out, s.min);
    case Stat::kMax:
      return append_optional(out, s.max);
    case Stat::kAbsmax:
      return append_optional(out, s.absmax);
    case Stat::kStd:
      return append_optional(out, s.std);
    case Stat::kRms:
      return append_optional(out, s.rms);
    case Stat::kL2:
      return append_optional(out, s.l2);
    case Stat::kNanCount:
      return json::append_int(out, s.nan_count);
    case Stat::kInfCount:
      return json::append_int(out, s.inf_count);
    case Stat::kZeroCount:
      return json::append_int(out, s.zero_count);
    default:
      return;
  }
}

void RecordFormatter::append_summary(std::string& out, const TraceSummary& summary) const {
  out += "{\"v\":" + std::to_string(kSchemaVersion) + ",\"summary\":{\"records\":";
  json::append_uint(out, summary.records);
  out += ",\"dropped\":";
  json::append_uint(out, summary.dropped);
  out += summary_rank_;
  out += "}}\n";
}

}  // namespace regiontrace::activation
