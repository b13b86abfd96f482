// Writes a parsed simdjson DOM value back as compact JSON, the same way every
// time: strings escaped as the SDK's json_writer does, integers exactly, and
// doubles shortest round-trip. So two spellings of one value (`1.0` and
// `1.00000`, `[1, 2]` and `[1,2]`) give one text, and a trace rewritten by
// `merge` reads back to the same numbers.
#pragma once

#include <simdjson.h>

#include <string>

namespace regiontrace::cli {

void append_json(std::string& out, simdjson::dom::element value);

}  // namespace regiontrace::cli
