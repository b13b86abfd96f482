// Ready-made KeySpec::value_check functions (config_schema.hpp):
//
//   KeySpec::path("output", "", "JSONL file ...").checked_by(sdk::not_a_folder)
//
// They run wherever the value is validated, `regiontrace check` included, so
// a value the sink would refuse at start-up is refused before the run.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace regiontrace::sdk {

// For a key naming a file the sink creates: an existing folder is refused
// (the sink would fail to open it only at start, after the checks passed).
inline std::string not_a_folder(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return {};
  return "`" + path + "` is a folder; name a file (in it, or elsewhere)";
}

}  // namespace regiontrace::sdk
