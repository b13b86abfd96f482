// The one glob matcher of regiontrace: region filters (`regions:`), nvtx
// `colors`, and any third-party sink that lets users pick regions by pattern
// use it, so a pattern means the same thing wherever it is written.
//
// Semantics are those of POSIX fnmatch(pattern, name, 0), which region
// filters used before and which users know from the shell:
//   *        any run of characters, '/' and '.' included
//   ?        any one character
//   [0-3]    one character of a set; ranges, [!..] / [^..] negation, a ']'
//            first in the set is literal, [:digit:] style classes
//   \c       the character c itself
// An unterminated '[' is a literal '['. Header-only and allocation-free, so
// it is cheap on the paths that match region names.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace regiontrace::sdk {

namespace glob_detail {

inline bool in_class(std::string_view cls, unsigned char c) {
  if (cls == "alpha") return std::isalpha(c) != 0;
  if (cls == "digit") return std::isdigit(c) != 0;
  if (cls == "alnum") return std::isalnum(c) != 0;
  if (cls == "upper") return std::isupper(c) != 0;
  if (cls == "lower") return std::islower(c) != 0;
  if (cls == "space") return std::isspace(c) != 0;
  if (cls == "punct") return std::ispunct(c) != 0;
  if (cls == "xdigit") return std::isxdigit(c) != 0;
  if (cls == "blank") return c == ' ' || c == '\t';
  if (cls == "cntrl") return std::iscntrl(c) != 0;
  if (cls == "print") return std::isprint(c) != 0;
  if (cls == "graph") return std::isgraph(c) != 0;
  return false;
}

// Matches the bracket expression starting at pattern[p] == '[' against c.
// Returns the index just past the closing ']' and sets *matched, or returns
// npos when the bracket is not terminated (then '[' is an ordinary char).
inline std::size_t match_bracket(std::string_view pattern, std::size_t p, unsigned char c,
                                 bool* matched) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < pattern.size()) {
    char lo = pattern[i];
    if (lo == ']' && !first) {
      *matched = found != negate;
      return i + 1;
    }
    first = false;
    if (lo == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const std::size_t end = pattern.find(":]", i + 2);
      if (end != std::string_view::npos) {
        if (in_class(pattern.substr(i + 2, end - (i + 2)), c)) found = true;
        i = end + 2;
        continue;
      }
    }
    if (lo == '\\' && i + 1 < pattern.size()) lo = pattern[++i];
    ++i;
    char hi = lo;
    if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
      hi = pattern[i + 1];
      i += 2;
      if (hi == '\\' && i < pattern.size()) hi = pattern[i++];
    }
    if (static_cast<unsigned char>(lo) <= c && c <= static_cast<unsigned char>(hi)) found = true;
  }
  return std::string_view::npos;
}

// One pattern element at pattern[p] against c: the index after the element,
// or npos when it does not match c.
inline std::size_t match_one(std::string_view pattern, std::size_t p, char c) {
  const char pc = pattern[p];
  if (pc == '?') return p + 1;
  if (pc == '[') {
    bool matched = false;
    const std::size_t next = match_bracket(pattern, p, static_cast<unsigned char>(c), &matched);
    if (next != std::string_view::npos) return matched ? next : std::string_view::npos;
    return c == '[' ? p + 1 : std::string_view::npos;
  }
  if (pc == '\\' && p + 1 < pattern.size()) {
    return pattern[p + 1] == c ? p + 2 : std::string_view::npos;
  }
  return pc == c ? p + 1 : std::string_view::npos;
}

}  // namespace glob_detail

// True when `pattern` contains a glob character, i.e. it is not an exact
// name (exact names are looked up, globs are matched).
inline bool is_glob(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

// fnmatch(pattern, name, 0) == 0, without fnmatch's NUL-terminated strings.
// Every element but '*' consumes exactly one character, so one backtrack
// point (the last '*') suffices: linear in practice, never exponential.
inline bool glob_match(std::string_view pattern, std::string_view name) {
  constexpr std::size_t npos = std::string_view::npos;
  std::size_t p = 0, n = 0, star = npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
      continue;
    }
    if (p < pattern.size()) {
      const std::size_t next = glob_detail::match_one(pattern, p, name[n]);
      if (next != npos) {
        p = next;
        ++n;
        continue;
      }
    }
    if (star == npos) return false;
    p = star + 1;
    n = ++resume;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace regiontrace::sdk
