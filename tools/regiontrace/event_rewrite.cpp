#include "event_rewrite.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::cli {
namespace {

// Ids below 2^40 are shifted by input slot * 2^40 to keep inputs' flows apart
// while staying below 2^53, where JSON readers still hold integers exactly.
constexpr int kIdShift = 40;
constexpr std::uint64_t kIdLimit = std::uint64_t{1} << kIdShift;

bool parse_int(std::string_view text, std::int64_t& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

void write_suffixed_name(std::string& o, std::string_view args_text, const std::string& suffix) {
  EventFields args;
  if (!args.parse(args_text)) {
    o += args_text;
    return;
  }
  o += '{';
  bool first = true;
  for (const EventField& f : args.fields()) {
    if (!first) o += ',';
    first = false;
    o += '"';
    o += f.key;
    o += "\":";
    if (f.key == "name" && f.value.size() >= 2 && f.value.front() == '"') {
      o += f.value.substr(0, f.value.size() - 1);
      o += escaped_content(suffix);
      o += '"';
    } else {
      o += f.value;
    }
  }
  o += '}';
}

// Flow/async ids: integers or hex strings ("0x1f"), as Chrome reads them.
void write_id(std::string& o, std::string_view id, std::size_t slot) {
  const std::uint64_t shift = static_cast<std::uint64_t>(slot) << kIdShift;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (ec == std::errc() && end == id.data() + id.size() && value < kIdLimit) {
    json::append_uint(o, value + shift);
    return;
  }
  if (id.size() >= 2 && id.front() == '"') {
    const std::string text(id.substr(1, id.size() - 2));
    const bool hex_prefix = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0;
    const std::string digits = hex_prefix ? text.substr(2) : text;
    char* stop = nullptr;
    const unsigned long long hex = std::strtoull(digits.c_str(), &stop, 16);
    if (!digits.empty() && *stop == '\0' && hex < kIdLimit) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "\"0x%llx\"", static_cast<unsigned long long>(hex + shift));
      o += buf;
      return;
    }
  }
  o += id;  // beyond the shifted range: left as it was
}

}  // namespace

std::string escaped_content(const std::string& text) {
  std::string quoted;
  json::append_escaped(quoted, text);
  return quoted.substr(1, quoted.size() - 2);
}

std::optional<std::int64_t> write_rewritten_event(std::string& o, const EventFields& fields,
                                                  std::int64_t pid, const EventRewrite& r,
                                                  bool instant, bool thread_name) {
  o += "{\"pid\":";
  json::append_int(o, pid);
  std::optional<std::int64_t> tid_value;
  // Members left as they are go out as runs of the original text
  // (`"key":value,...`), one append per run.
  const char* run_begin = nullptr;
  const char* run_end = nullptr;
  auto flush = [&] {
    if (run_begin == nullptr) return;
    o += ',';
    o.append(run_begin, static_cast<std::size_t>(run_end - run_begin));
    run_begin = nullptr;
  };
  auto key = [&](const EventField& f) {
    flush();
    o += ",\"";
    o += f.key;
    o += "\":";
  };
  for (const EventField& f : fields.fields()) {
    if (f.key == "pid") {
      flush();
      continue;
    }
    if (f.key == "ts" && r.ts_offset_ns != 0) {
      if (auto ns = sdk::units::parse_us(f.value)) {
        key(f);
        json::append_microseconds(o, *ns + r.ts_offset_ns);
        continue;
      }
    } else if (f.key == "tid" && r.tid_offset != 0) {
      std::int64_t tid = 0;
      if (parse_int(f.value, tid)) {
        tid_value = tid + r.tid_offset;
        key(f);
        json::append_int(o, *tid_value);
        continue;
      }
    } else if ((f.key == "id" || f.key == "bind_id") && r.slot > 0) {
      key(f);
      write_id(o, f.value, r.slot);
      continue;
    } else if (f.key == "s" && instant && f.value == "\"g\"") {
      key(f);
      o += "\"p\"";
      continue;
    } else if (f.key == "args" && r.tid_offset != 0 && thread_name) {
      key(f);
      write_suffixed_name(o, f.value, r.suffix);
      continue;
    }
    if (run_begin == nullptr) run_begin = f.key.data() - 1;  // the key's opening quote
    run_end = f.value.data() + f.value.size();
  }
  flush();
  o += '}';
  return tid_value;
}

}  // namespace regiontrace::cli
