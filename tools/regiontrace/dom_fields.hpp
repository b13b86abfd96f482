// Members of small JSON documents held as a simdjson DOM (a trace's header
// members, memory summaries), read without exceptions for absent or odd
// values.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace regiontrace::cli {

std::optional<std::string_view> string_field(simdjson::dom::object object, std::string_view key);
// An integer, or a whole number written with a fraction or exponent within
// int64's range; nullopt for anything else.
std::optional<std::int64_t> integer_field(simdjson::dom::object object, std::string_view key);

}  // namespace regiontrace::cli
