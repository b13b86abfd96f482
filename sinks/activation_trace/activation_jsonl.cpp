#include "activation_jsonl.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

#if !defined(__SSE2__)
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
#endif

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

#if defined(__SSE2__)
// The bytes of x that are control characters, '"' or '\\', as a bit mask.
inline unsigned special_bytes(__m128i x) {
  const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
  const __m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))));
}

// Copies the n bytes at q to p and says whether any needs escaping, each
// block loaded once from q and checked in the register it was loaded into:
// reading the copy back would wait on the stores that wrote it. Blocks
// overlap rather than run past either end.
inline bool copy_checking(char* p, const char* q, std::size_t n) {
  if (n >= 16) {
    unsigned special = 0;
    for (std::size_t i = 0; i + 16 < n; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + i), x);
      special |= special_bytes(x);
    }
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + n - 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + n - 16), x);
    return (special | special_bytes(x)) != 0;
  }
  if (n >= 8) {
    const __m128i head = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
    const __m128i tail = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + n - 8));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), head);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p + n - 8), tail);
    return special_bytes(_mm_unpacklo_epi64(head, tail)) != 0;
  }
  std::uint32_t head;
  std::uint32_t tail;
  if (n >= 4) {
    std::memcpy(&head, q, 4);
    std::memcpy(&tail, q + n - 4, 4);
    std::memcpy(p, &head, 4);
    std::memcpy(p + n - 4, &tail, 4);
  } else if (n > 0) {
    // First, middle and last byte (twice): every byte of a name of 1 to 3.
    const char middle = q[n / 2];
    const char last = q[n - 1];
    p[0] = q[0];
    p[n / 2] = middle;
    p[n - 1] = last;
    head = static_cast<unsigned char>(q[0]) | static_cast<unsigned char>(middle) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(last)) * 0x1010000u;
    tail = head;
  } else {
    return false;
  }
  const __m128i x = _mm_unpacklo_epi32(_mm_cvtsi32_si128(static_cast<int>(head)),
                                       _mm_cvtsi32_si128(static_cast<int>(tail)));
  return (special_bytes(x) & 0xFF) != 0;
}
#endif

// Names seldom need escaping: copy them whole when they do not.
char* put_name(char* p, std::string_view s) {
  *p = '"';
#if defined(__SSE2__)
  if (copy_checking(p + 1, s.data(), s.size())) return put_escaped(p, s);
  p += 1 + s.size();
#else
  if (needs_escape(s)) return put_escaped(p, s);
  p = put(p + 1, s);
#endif
  *p++ = '"';
  return p;
}

// The json_writer.hpp convention: NaN and infinities as strings.
inline char* put_double(char* p, double v) {
  if (__builtin_expect(std::isfinite(v), 1)) return write_double(p, v);
  if (std::isnan(v)) return put(p, "\"NaN\"");
  return put(p, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
}

inline char* put_optional(char* p, const std::optional<double>& v) {
  if (__builtin_expect(v.has_value(), 1)) return put_double(p, *v);
  std::memcpy(p, "null", 4);
  return p + 4;
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

#if defined(__SSE2__)
// The 16 nibbles spread to bytes and turned into digits in one register.
char* put_hex(char* p, std::uint64_t v) {
  const std::uint64_t first_byte_first = __builtin_bswap64(v);  // x86 is little-endian
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&first_byte_first));
  const __m128i low_nibble = _mm_set1_epi8(0x0F);
  const __m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibble),
                                            _mm_and_si128(bytes, low_nibble));
  const __m128i past_nine =
      _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
  p[0] = '"';
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 1),
                   _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), past_nine));
  p[17] = '"';
  return p + 18;
}
#else
char* put_hex(char* p, std::uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  p[0] = '"';
  for (int i = 0; i < 16; ++i) p[16 - i] = kHex[(v >> (4 * i)) & 0xF];
  p[17] = '"';
  return p + 18;
}
#endif

char* put_shape(char* p, const std::vector<std::int64_t>& shape) {
  *p++ = '[';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) *p++ = ',';
    p = write_int(p, shape[i]);
  }
  *p++ = ']';
  return p;
}

// A field's key, copied whole with its padding (room is left for it).
template <typename Field>
inline char* put_key(char* p, const Field& field) {
  std::memcpy(p, field.key, sizeof(field.key));
  return p + field.key_size;
}

}  // namespace

RecordFormatter::RecordFormatter(StatSet stats, int rank) : stats_(std::move(stats)) {
  prefix_ = "{\"v\":" + std::to_string(kSchemaVersion) + ",\"module\":";
  summary_rank_ = ",\"rank\":" + std::to_string(rank);
  rank_ = summary_rank_ + ",\"seq\":";
  // What bound() does not count per record: the fixed text, and every
  // statistic at its longest (an error string's "<error: >" included).
  // write_double's scratch past the last number included, which also
  // covers the padding of the last key's 16-byte copy.
  fixed_bound_ = prefix_.size() + rank_.size() + 64 + 2 * kNumberMax + kDoubleScratch;
  for (Stat stat : stats_.order()) {
    Field field;
    const std::string key = ",\"" + std::string(stat_name(stat)) + "\":";
    static_assert(sizeof(field.key) >= sizeof(",\"zero_count\":") - 1, "longest key");
    std::memcpy(field.key, key.data(), key.size());
    field.key_size = static_cast<std::uint8_t>(key.size());
    switch (stat) {
      case Stat::kSum:
        field.real = &TensorStats::sum;
        break;
      case Stat::kMean:
        field.real = &TensorStats::mean;
        break;
      case Stat::kAbsMean:
        field.real = &TensorStats::abs_mean;
        break;
      case Stat::kMin:
        field.real = &TensorStats::min;
        break;
      case Stat::kMax:
        field.real = &TensorStats::max;
        break;
      case Stat::kAbsmax:
        field.real = &TensorStats::absmax;
        break;
      case Stat::kStd:
        field.real = &TensorStats::std;
        break;
      case Stat::kRms:
        field.real = &TensorStats::rms;
        break;
      case Stat::kL2:
        field.real = &TensorStats::l2;
        break;
      case Stat::kNanCount:
        field.kind = Kind::kNumericCount;
        field.count = &TensorStats::nan_count;
        break;
      case Stat::kInfCount:
        field.kind = Kind::kNumericCount;
        field.count = &TensorStats::inf_count;
        break;
      case Stat::kZeroCount:
        field.kind = Kind::kNumericCount;
        field.count = &TensorStats::zero_count;
        break;
      case Stat::kNumel:
        field.kind = Kind::kCount;
        field.count = &TensorStats::numel;
        break;
      case Stat::kShape:
        field.kind = Kind::kShape;
        break;
      case Stat::kDtype:
        field.kind = Kind::kText;
        field.text = &TensorStats::dtype;
        break;
      case Stat::kDevice:
        field.kind = Kind::kText;
        field.text = &TensorStats::device;
        break;
      case Stat::kHash:
        field.kind = Kind::kHash;
        break;
    }
    if (runs_.empty() || runs_.back().kind != field.kind) {
      const auto at = static_cast<std::uint32_t>(fields_.size());
      runs_.push_back(Run{field.kind, at, at});
    }
    ++runs_.back().end;
    fields_.push_back(field);
    fixed_bound_ += key.size() + kErrorPrefix + kNumberMax;
    has_shape_ = has_shape_ || stat == Stat::kShape;
    has_text_stats_ =
        has_text_stats_ || stat == Stat::kDtype || stat == Stat::kDevice || stat == Stat::kHash;
  }
}

std::size_t RecordFormatter::bound(const ActivationRecord& r) const {
  const TensorStats& s = r.stats;
  std::size_t text = r.module().size() + r.tensor().size() + r.op().size();
  if (has_text_stats_) text += s.dtype.size() + s.device.size() + s.hash_error.size() + 8;
  return fixed_bound_ + kEscapedCharMax * (text + fields_.size() * s.error.size()) +
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
  const TensorStats& s = r.stats;
  const bool failed = !s.error.empty();
  const Field* const fields = fields_.data();
  for (const Run& run : runs_) {
    const Field* field = fields + run.begin;
    const Field* const end = fields + run.end;
    switch (run.kind) {
      case Kind::kReal:
        if (failed) {
          for (; field != end; ++field) p = put_error(put_key(p, *field), s.error);
        } else {
          for (; field != end; ++field) p = put_optional(put_key(p, *field), s.*field->real);
        }
        break;
      case Kind::kNumericCount:
        if (failed) {
          for (; field != end; ++field) p = put_error(put_key(p, *field), s.error);
        } else {
          for (; field != end; ++field) p = write_int(put_key(p, *field), s.*field->count);
        }
        break;
      case Kind::kCount:
        for (; field != end; ++field) p = write_int(put_key(p, *field), s.*field->count);
        break;
      case Kind::kShape:
        for (; field != end; ++field) p = put_shape(put_key(p, *field), s.shape);
        break;
      case Kind::kText:
        for (; field != end; ++field) p = put_name(put_key(p, *field), s.*field->text);
        break;
      case Kind::kHash:
        for (; field != end; ++field) {
          p = put_key(p, *field);
          p = s.hash ? put_hex(p, *s.hash)
                     : put_error(p, s.hash_error.empty() ? "no hash" : s.hash_error);
        }
        break;
    }
  }
  p = put(p, "}\n");
  out.append(begin, static_cast<std::size_t>(p - begin));
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
