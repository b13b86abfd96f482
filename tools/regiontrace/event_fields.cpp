#include "event_fields.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace regiontrace::cli {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// End of the string starting at the quote at i, or npos.
std::size_t string_end(std::string_view s, std::size_t i) {
  const std::size_t end = json_string_end(s.data(), i, s.size());
  return end == 0 ? std::string_view::npos : end;
}

constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {'"', '{', '}', '[', ']'}) t[c] = true;
  return t;
}();

// End of the value starting at i, or npos.
std::size_t value_end(std::string_view s, std::size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  const char first = s[i];
  if (first == '"') return string_end(s, i);
  if (first == '{' || first == '[') {
    int depth = 0;
    const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
    for (; i < s.size(); ++i) {
      while (i < s.size() && !kStructural[bytes[i]]) ++i;
      if (i >= s.size()) break;
      const char c = s[i];
      if (c == '"') {
        i = string_end(s, i);
        if (i == std::string_view::npos) return i;
        --i;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }
  const std::size_t start = i;
  while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i == start ? std::string_view::npos : i;
}

}  // namespace

std::size_t json_string_end(const char* text, std::size_t open, std::size_t size) {
  std::size_t i = open + 1;
  for (;;) {
    const void* quote = i < size ? std::memchr(text + i, '"', size - i) : nullptr;
    if (quote == nullptr) return 0;
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(quote) - text);
    // Escaped when an odd number of backslashes precede it.
    std::size_t first = at;
    while (first > open + 1 && text[first - 1] == '\\') --first;
    if ((at - first) % 2 == 0) return at + 1;
    i = at + 1;
  }
}

bool EventFields::parse(std::string_view event) {
  fields_.clear();
  std::size_t i = skip_space(event, 0);
  if (i >= event.size() || event[i] != '{') return false;
  i = skip_space(event, i + 1);
  if (i < event.size() && event[i] == '}') return true;
  for (;;) {
    if (i >= event.size() || event[i] != '"') return false;
    const std::size_t key_end = string_end(event, i);
    if (key_end == std::string_view::npos) return false;
    const std::string_view key = event.substr(i + 1, key_end - i - 2);
    i = skip_space(event, key_end);
    if (i >= event.size() || event[i] != ':') return false;
    i = skip_space(event, i + 1);
    const std::size_t end = value_end(event, i);
    if (end == std::string_view::npos) return false;
    fields_.push_back({key, event.substr(i, end - i)});
    i = skip_space(event, end);
    if (i >= event.size()) return false;
    if (event[i] == '}') return true;
    if (event[i] != ',') return false;
    i = skip_space(event, i + 1);
  }
}

std::optional<std::string_view> EventFields::raw(std::string_view key) const {
  for (const auto& f : fields_) {
    if (f.key == key) return f.value;
  }
  return std::nullopt;
}

std::optional<std::string_view> EventFields::string(std::string_view key) const {
  auto v = raw(key);
  if (!v || v->size() < 2 || v->front() != '"') return std::nullopt;
  return v->substr(1, v->size() - 2);
}

std::optional<std::string> EventFields::text(std::string_view key) const {
  const auto v = string(key);
  if (!v) return std::nullopt;
  return decode_json_string(*v);
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at text[at]; -1 when they are not.
long hex4(std::string_view text, std::size_t at) {
  if (at + 4 > text.size()) return -1;
  long v = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const int h = hex_value(text[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::optional<std::string> decode_json_string(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == escaped.size()) return std::nullopt;
    switch (escaped[i]) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        long cp = hex4(escaped, i + 1);
        if (cp < 0) return std::nullopt;
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
          // A high surrogate: its low half follows as another \\u escape.
          const long low = i + 2 < escaped.size() && escaped[i + 1] == '\\' && escaped[i + 2] == 'u'
                               ? hex4(escaped, i + 3)
                               : -1;
          if (low < 0xDC00 || low >= 0xE000) return std::nullopt;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return std::nullopt;
        }
        append_utf8(out, static_cast<unsigned long>(cp));
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

std::optional<double> EventFields::number(std::string_view key) const {
  auto v = raw(key);
  if (!v) return std::nullopt;
  double d = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (ec != std::errc() || end != v->data() + v->size()) return std::nullopt;
  return d;
}

}  // namespace regiontrace::cli
