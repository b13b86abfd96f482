// Reads a configuration or catalog file the user named, refusing what cannot
// be one: a folder, a device or pipe (`/dev/zero` would never end), or a file
// over kMaxConfigBytes. Errors name the file, what it is and the limit.
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::detail {

inline constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;

// `what` names the role in messages: "profile", "region catalog".
// Throws regiontrace::Error.
std::string read_bounded_text_file(const std::string& path, const std::string& what);

}  // namespace regiontrace::detail
