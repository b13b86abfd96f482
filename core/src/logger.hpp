// Core's messages to the user: one line each on stderr, "[regiontrace] ...".
#pragma once

#include <string>
#include <string_view>

#include "regiontrace/sdk/sink_context.hpp"

namespace regiontrace::detail {

void set_log_level(LogLevel level);
LogLevel log_level();
LogLevel parse_log_level(std::string_view text, bool* ok);

void log(LogLevel level, std::string_view message);
// Ignores the log level: for the one message that must be seen.
void log_unconditionally(LogLevel level, std::string_view message);
// Logs only the first time `key` is seen in this process (repeated problems on
// a hot path must not flood the log).
void log_once(LogLevel level, const std::string& key, std::string_view message);
void log_from_sink(LogLevel level, const char* sink_name, const char* message);

inline void warn(std::string_view m) {
  log(LogLevel::kWarn, m);
}
inline void info(std::string_view m) {
  log(LogLevel::kInfo, m);
}

}  // namespace regiontrace::detail
