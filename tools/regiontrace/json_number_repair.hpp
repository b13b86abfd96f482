// JSON that other producers write and a strict parser refuses, made
// parseable without changing what it says:
// - Python's json.dumps writes non-finite floats as bare NaN / Infinity /
//   -Infinity (not JSON): quoted, they are the strings the SDK writes.
// - Integers beyond 64 bits (a hash, a counter) are valid JSON that simdjson
//   cannot hold: quoted, they are kept digit for digit and compared as text.
// Strings are left alone. Readers call this only after a first parse failed,
// so well-formed input pays nothing.
#pragma once

#include <string>
#include <string_view>

namespace regiontrace::cli {

std::string repair_json_numbers(std::string_view json);

}  // namespace regiontrace::cli
