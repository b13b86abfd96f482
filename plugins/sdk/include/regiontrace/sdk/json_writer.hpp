// Small helpers to append JSON text, shared by the built-in sinks and open to
// third-party ones: escaping, shortest round-trip numbers, and the one way
// this project writes non-finite floats ("NaN", "Infinity", "-Infinity" as
// strings, which JSON has no literal for and every reader can parse back).
//
// Two levels: the append_* functions write one value into a std::string
// (fast paths that format millions of records use them directly), and
// json::Writer keeps the commas and nesting of objects and arrays, so an
// object written in two places (a summary and a snapshot both carry the same
// sub-object) is written by one function taking a Writer, not copied.
// Doubles use std::to_chars' shortest form, which parses back bit-exactly.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace regiontrace::json {

inline void append_escaped(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

inline void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "\"NaN\"";
  } else if (std::isinf(v)) {
    out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
  }
}

inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

inline void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

// Appends a JSON document piece by piece into `out` (which it does not own,
// so a caller can reuse one buffer for many records). It tracks only what
// it must: whether the next value in each open object/array needs a comma.
// Nesting deeper than 64 levels is not supported (records are shallow).
//
//   json::Writer w(line);
//   w.begin_object().field("name", name).field("mean", 0.1);
//   w.key("tracking").begin_object().field("enabled", true).end_object();
//   w.end_object();
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  Writer& begin_object() {
    open('{');
    return *this;
  }
  Writer& end_object() {
    close('}');
    return *this;
  }
  Writer& begin_array() {
    open('[');
    return *this;
  }
  Writer& end_array() {
    close(']');
    return *this;
  }

  // The key of the next value; inside an object only.
  Writer& key(std::string_view k) {
    separate();
    append_escaped(out_, k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }

  Writer& value(std::string_view s) {
    separate();
    append_escaped(out_, s);
    return *this;
  }
  Writer& value(const char* s) { return value(std::string_view(s)); }
  Writer& value(const std::string& s) { return value(std::string_view(s)); }
  Writer& value(bool b) {
    separate();
    out_ += b ? "true" : "false";
    return *this;
  }
  Writer& value(std::nullptr_t) {
    separate();
    out_ += "null";
    return *this;
  }
  template <typename T>
  std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, Writer&> value(T v) {
    separate();
    if constexpr (std::is_floating_point_v<T>) {
      append_double(out_, static_cast<double>(v));
    } else if constexpr (std::is_signed_v<T>) {
      append_int(out_, static_cast<std::int64_t>(v));
    } else {
      append_uint(out_, static_cast<std::uint64_t>(v));
    }
    return *this;
  }
  // Already formatted JSON (a value written elsewhere), inserted as is.
  Writer& raw_value(std::string_view json) {
    separate();
    out_ += json;
    return *this;
  }

  template <typename T>
  Writer& field(std::string_view k, T&& v) {
    key(k);
    return value(std::forward<T>(v));
  }

  std::string& out() { return out_; }

  // For a document people read (a configuration snapshot): the items of
  // the containers nested up to `depth` levels deep each start a line,
  // indented two spaces a level; deeper ones stay on their parent's line.
  // 0 (the default) writes everything on one line.
  Writer& lines_to_depth(unsigned depth) {
    line_depth_ = depth;
    return *this;
  }

 private:
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ > 0) {
      const std::uint64_t bit = std::uint64_t{1} << (depth_ - 1);
      if (has_item_ & bit) out_ += ',';
      has_item_ |= bit;
      if (depth_ <= line_depth_) new_line(depth_);
    }
  }
  void new_line(unsigned indent) {
    out_ += '\n';
    out_.append(2 * indent, ' ');
  }
  void open(char c) {
    separate();
    out_ += c;
    ++depth_;
    has_item_ &= ~(std::uint64_t{1} << (depth_ - 1));
  }
  void close(char c) {
    if (depth_ > 0 && depth_ <= line_depth_ && (has_item_ & (std::uint64_t{1} << (depth_ - 1)))) {
      new_line(depth_ - 1);
    }
    out_ += c;
    if (depth_ > 0) --depth_;
  }

  std::string& out_;
  unsigned depth_ = 0;
  std::uint64_t has_item_ = 0;  // bit d-1: the level-d container has an item
  bool after_key_ = false;
  unsigned line_depth_ = 0;
};

}  // namespace regiontrace::json
