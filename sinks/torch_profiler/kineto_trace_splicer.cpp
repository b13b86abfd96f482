#include "kineto_trace_splicer.hpp"

#include <cctype>
#include <cstdio>
#include <memory>
#include <string_view>

namespace regiontrace::torch_profiler {
namespace {

constexpr std::string_view kBaseKey = "\"baseTimeNanoseconds\"";
constexpr std::string_view kEventsKey = "\"traceEvents\"";
constexpr std::size_t kChunk = 1 << 20;
constexpr std::size_t kMaxHeader = std::size_t{64} << 20;  // where traceEvents must start

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

bool parse_base(std::string_view text, std::int64_t* out) {
  const std::size_t k = text.find(kBaseKey);
  if (k == std::string_view::npos) return false;
  std::size_t i = k + kBaseKey.size();
  while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ':')) {
    ++i;
  }
  std::int64_t v = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    v = v * 10 + (text[i] - '0');
    digits = true;
    ++i;
  }
  if (digits) *out = v;
  return digits;
}

std::string read_range(std::FILE* f, long offset, std::size_t n) {
  std::string s(n, '\0');
  if (std::fseek(f, offset, SEEK_SET) != 0) return {};
  s.resize(std::fread(s.data(), 1, n, f));
  return s;
}

// Position just after the '[' that opens the traceEvents array, or npos.
std::size_t array_start(std::string_view text) {
  const std::size_t k = text.find(kEventsKey);
  if (k == std::string_view::npos) return std::string_view::npos;
  std::size_t i = k + kEventsKey.size();
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i >= text.size() || text[i] != ':') return std::string_view::npos;
  ++i;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i >= text.size() || text[i] != '[') return std::string_view::npos;
  return i + 1;
}

}  // namespace

std::int64_t read_base_time_ns(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return 0;
  std::fseek(f.get(), 0, SEEK_END);
  const long size = std::ftell(f.get());
  constexpr long kWindow = 64 * 1024;
  std::int64_t base = 0;
  // Kineto writes it among the closing fields; look at the head too.
  if (parse_base(read_range(f.get(), size > kWindow ? size - kWindow : 0, kWindow), &base)) {
    return base;
  }
  parse_base(read_range(f.get(), 0, kWindow), &base);
  return base;
}

bool splice_trace_events(const std::string& in_path, const std::string& events, OutputFile& out) {
  File f(std::fopen(in_path.c_str(), "rb"));
  if (!f) return false;
  std::string head;
  std::string chunk(kChunk, '\0');
  std::size_t at = std::string::npos;
  while (at == std::string::npos) {
    const std::size_t n = std::fread(chunk.data(), 1, kChunk, f.get());
    if (n == 0 || head.size() > kMaxHeader) return false;
    head.append(chunk.data(), n);
    at = array_start(head);
    // The array may open at the very end of what was read: read on to see
    // whether it is empty.
    if (at != std::string::npos && at == head.size()) {
      const std::size_t more = std::fread(chunk.data(), 1, kChunk, f.get());
      head.append(chunk.data(), more);
    }
  }
  std::size_t next = at;
  while (next < head.size() && std::isspace(static_cast<unsigned char>(head[next]))) ++next;
  const bool empty_array = next < head.size() && head[next] == ']';
  out.write(std::string_view(head).substr(0, at));
  out.write(events);
  if (!events.empty() && !empty_array) out.write(",");
  out.write(std::string_view(head).substr(at));
  for (std::size_t n; (n = std::fread(chunk.data(), 1, kChunk, f.get())) > 0;) {
    out.write(std::string_view(chunk.data(), n));
  }
  return true;
}

}  // namespace regiontrace::torch_profiler
