// Catalog short names on the command line: `inference_denoising` names
// `profiler_region_inference_denoising` wherever a region name is read
// (README), and traces hold the full name. Uses the catalogs the core
// declares (regiontrace/inspect.hpp).
#pragma once

#include <string>
#include <vector>

namespace regiontrace::cli {

// The other spellings of a region name or a path of them (`a/b/c`): each
// part that is a catalog short name replaced by its full name; then each
// full name by its short name. Empty when no part is a catalog name.
std::vector<std::string> catalog_spellings(const std::string& name_or_path);

}  // namespace regiontrace::cli
