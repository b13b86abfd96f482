#include "record_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "number_text.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::activation {
namespace {

// A record is written with plain pointer stores into a buffer sized for its
// worst case (every name character escaped as \u00XX, every number at its
// longest), then appended to the output at once: appending piece by piece
// to a std::string cost more than the numbers themselves.
constexpr std::size_t kEscapedCharMax = 6;
constexpr std::size_t kNumberMax = 26;    // a double, or "\"-Infinity\""
constexpr std::size_t kErrorPrefix = 12;  // "<error: " + '>' + quotes, rounded up

// Keys and names are short: two overlapping fixed-size copies instead of a
// call to memcpy for each.
inline char* put(char* p, std::string_view s) {
  const std::size_t n = s.size();
  const char* q = s.data();
  if (n > 16 && n <= 32) {
    std::memcpy(p, q, 16);
    std::memcpy(p + n - 16, q + n - 16, 16);
  } else if (n >= 8 && n <= 16) {
    std::memcpy(p, q, 8);
    std::memcpy(p + n - 8, q + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(p, q, 4);
    std::memcpy(p + n - 4, q + n - 4, 4);
  } else if (n < 4) {
    if (n & 2) std::memcpy(p, q, 2);
    if (n & 1) p[n - 1] = q[n - 1];
  } else {
    std::memcpy(p, q, n);
  }
  return p + n;
}

// Whether any of the 8 bytes of w is a control character, '"' or '\\'
// (bytes of UTF-8 sequences, 0x80 and up, are not): the classic
// has-zero-byte / has-byte-below tests, exact for the question asked.
inline bool has_special_byte(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kHigh = 0x8080808080808080ull;
  const std::uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  const std::uint64_t equal = ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash);
  return (below_space | (equal & kHigh)) != 0;
}

inline bool needs_escape(std::string_view s) {
  const char* q = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, q + i, 8);
    if (has_special_byte(w)) return true;
  }
  if (i < n && n >= 8) {  // the last 8 bytes, overlapping what was checked
    std::uint64_t w;
    std::memcpy(&w, q + n - 8, 8);
    return has_special_byte(w);
  }
  for (; i < n; ++i) {
    const char c = q[i];
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') return true;
  }
  return false;
}

char* put_escaped(char* p, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  *p++ = '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        *p++ = '\\';
        *p++ = '"';
        break;
      case '\\':
        *p++ = '\\';
        *p++ = '\\';
        break;
      case '\n':
        *p++ = '\\';
        *p++ = 'n';
        break;
      case '\r':
        *p++ = '\\';
        *p++ = 'r';
        break;
      case '\t':
        *p++ = '\\';
        *p++ = 't';
        break;
      default:
        if (u < 0x20) {
          p = put(p, "\\u00");
          *p++ = kHex[u >> 4];
          *p++ = kHex[u & 0xF];
        } else {
          *p++ = c;
        }
    }
  }
  *p++ = '"';
  return p;
}

// Names seldom need escaping: copy them whole when they do not.
char* put_name(char* p, std::string_view s) {
  if (needs_escape(s)) return put_escaped(p, s);
  *p++ = '"';
  p = put(p, s);
  *p++ = '"';
  return p;
}

// The json_writer.hpp convention: NaN and infinities as strings.
char* put_double(char* p, double v) {
  if (std::isnan(v)) return put(p, "\"NaN\"");
  if (std::isinf(v)) return put(p, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  return write_double(p, v);
}

char* put_optional(char* p, const std::optional<double>& v) {
  return v ? put_double(p, *v) : put(p, "null");
}

char* put_error(char* p, std::string_view error) {
  // Escaped as one string: "<error: " and ">" need no escaping.
  char* start = p;
  p = put_escaped(p, error);
  // Shift the escaped text right to make room for the prefix.
  const std::size_t escaped = static_cast<std::size_t>(p - start) - 2;
  std::memmove(start + 9, start + 1, escaped);
  std::memcpy(start, "\"<error: ", 9);
  p = start + 9 + escaped;
  *p++ = '>';
  *p++ = '"';
  return p;
}

char* put_hex(char* p, std::uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  p[0] = '"';
  for (int i = 0; i < 16; ++i) p[16 - i] = kHex[(v >> (4 * i)) & 0xF];
  p[17] = '"';
  return p + 18;
}

}  // namespace

RecordFormatter::RecordFormatter(StatSet stats, int rank) : stats_(std::move(stats)) {
  prefix_ = "{\"v\":" + std::to_string(kSchemaVersion) + ",\"module\":";
  summary_rank_ = ",\"rank\":" + std::to_string(rank);
  rank_ = summary_rank_ + ",\"seq\":";
  // What bound() does not count per record: the fixed text, and every
  // statistic at its longest (an error string's "<error: >" included).
  // write_double's scratch past the last number included.
  fixed_bound_ = prefix_.size() + rank_.size() + 64 + 2 * kNumberMax + kDoubleScratch;
  for (Stat stat : stats_.order()) {
    keys_.push_back(",\"" + std::string(stat_name(stat)) + "\":");
    fixed_bound_ += keys_.back().size() + kErrorPrefix + kNumberMax;
    has_shape_ = has_shape_ || stat == Stat::kShape;
    has_text_stats_ =
        has_text_stats_ || stat == Stat::kDtype || stat == Stat::kDevice || stat == Stat::kHash;
  }
}

std::size_t RecordFormatter::bound(const ActivationRecord& r) const {
  const TensorStats& s = r.stats;
  std::size_t text = r.module().size() + r.tensor().size() + r.op().size();
  if (has_text_stats_) text += s.dtype.size() + s.device.size() + s.hash_error.size() + 8;
  return fixed_bound_ + kEscapedCharMax * (text + stats_.order().size() * s.error.size()) +
         (has_shape_ ? 21 * s.shape.size() : 0);
}

void RecordFormatter::append(std::string& out, const ActivationRecord& r) const {
  const std::size_t most = bound(r);
  char stack_buffer[2048];
  std::unique_ptr<char[]> heap;
  char* const begin =
      most <= sizeof(stack_buffer) ? stack_buffer : (heap.reset(new char[most]), heap.get());
  char* p = begin;
  p = put(p, prefix_);
  p = put_name(p, r.module());
  p = put(p, ",\"tensor\":");
  p = put_name(p, r.tensor());
  p = put(p, ",\"step\":");
  p = r.step == kNoStep ? put(p, "null") : write_int(p, r.step);
  p = put(p, rank_);
  p = write_uint(p, r.seq);
  if (!r.op().empty()) {
    p = put(p, ",\"op\":");
    p = put_name(p, r.op());
  }
  const std::vector<Stat>& order = stats_.order();
  for (std::size_t i = 0; i < order.size(); ++i) {
    p = put(p, keys_[i]);
    p = append_stat(p, order[i], r.stats);
  }
  p = put(p, "}\n");
  out.append(begin, static_cast<std::size_t>(p - begin));
}

char* RecordFormatter::append_stat(char* p, Stat stat, const TensorStats& s) const {
  switch (stat) {
    case Stat::kNumel:
      return write_int(p, s.numel);
    case Stat::kShape:
      *p++ = '[';
      for (std::size_t i = 0; i < s.shape.size(); ++i) {
        if (i != 0) *p++ = ',';
        p = write_int(p, s.shape[i]);
      }
      *p++ = ']';
      return p;
    case Stat::kDtype:
      return put_name(p, s.dtype);
    case Stat::kDevice:
      return put_name(p, s.device);
    case Stat::kHash:
      if (s.hash) return put_hex(p, *s.hash);
      return put_error(p, s.hash_error.empty() ? "no hash" : s.hash_error);
    default:
      break;
  }
  if (!s.error.empty()) return put_error(p, s.error);
  switch (stat) {
    case Stat::kSum:
      return put_optional(p, s.sum);
    case Stat::kMean:
      return put_optional(p, s.mean);
    case Stat::kAbsMean:
      return put_optional(p, s.abs_mean);
    case Stat::kMin:
      return put_optional(p, s.min);
    case Stat::kMax:
      return put_optional(p, s.max);
    case Stat::kAbsmax:
      return put_optional(p, s.absmax);
    case Stat::kStd:
      return put_optional(p, s.std);
    case Stat::kRms:
      return put_optional(p, s.rms);
    case Stat::kL2:
      return put_optional(p, s.l2);
    case Stat::kNanCount:
      return write_int(p, s.nan_count);
    case Stat::kInfCount:
      return write_int(p, s.inf_count);
    case Stat::kZeroCount:
      return write_int(p, s.zero_count);
    default:
      return p;
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
