#include "logger.hpp"

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>

namespace regiontrace::detail {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

const char* level_word(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "";
  }
  return "";
}

void write_line(LogLevel level, std::string_view who, std::string_view message) {
  std::string line = "[regiontrace";
  if (!who.empty()) {
    line += ':';
    line.append(who);
  }
  line += "] ";
  line += level_word(level);
  line += ": ";
  line.append(message);
  line += '\n';
  // One write() per line: lines from several threads or ranks never interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace

void set_log_level(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel log_level() {
  return static_cast<LogLevel>(g_level.load());
}

LogLevel parse_log_level(std::string_view text, bool* ok) {
  *ok = true;
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarn;
  if (text == "error") return LogLevel::kError;
  if (text == "off") return LogLevel::kOff;
  *ok = false;
  return LogLevel::kInfo;
}

void log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  write_line(level, {}, message);
}

void log_unconditionally(LogLevel level, std::string_view message) {
  write_line(level, {}, message);
}

void log_once(LogLevel level, const std::string& key, std::string_view message) {
  // Never destroyed: sinks log once from the exit handler, which may run
  // after function-local statics constructed later than it was registered.
  struct Seen {
    std::mutex mutex;
    std::set<std::string> keys;
  };
  static Seen* seen = new Seen();
  {
    std::lock_guard<std::mutex> lock(seen->mutex);
    if (!seen->keys.insert(key).second) return;
  }
  log(level, message);
}

void log_from_sink(LogLevel level, const char* sink_name, const char* message) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  write_line(level, sink_name != nullptr ? sink_name : "", message != nullptr ? message : "");
}

}  // namespace regiontrace::detail
