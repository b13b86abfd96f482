// Reads a configuration or catalog file the user named, refusing what cannot
// be one: a folder, a device or pipe (`/dev/zero` would never end), or a file
// over its limit. Errors name the file, what it is and the limit.
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::detail {

// A profile is a few KiB; 1 MiB of YAML already takes yaml-cpp 2 s and
// 90 MB. Catalogs list every layer of a model, so they get more.
inline constexpr std::uintmax_t kMaxProfileBytes = 1u << 20;
inline constexpr std::uintmax_t kMaxCatalogBytes = 4u << 20;

// `what` names the role in messages: "profile", "region catalog".
// Throws regiontrace::Error.
std::string read_bounded_text_file(const std::string& path, const std::string& what,
                                   std::uintmax_t max_bytes);

}  // namespace regiontrace::detail
