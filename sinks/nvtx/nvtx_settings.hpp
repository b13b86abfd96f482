// The nvtx sink's keys: declared once (schema(), which feeds validation,
// REGIONTRACE_NVTX_<KEY> variables and `regiontrace check`), read once.
#pragma once

#include <string>
#include <vector>

#include "region_colors.hpp"
#include "regiontrace/sdk/config_schema.hpp"
#include "regiontrace/sdk/sink_context.hpp"

namespace regiontrace::nvtx {

struct NvtxSettings {
  std::string domain;             // empty: NVTX's default domain
  std::string prefix;             // ranges are `<prefix>.region::<name>`
  std::vector<ColorRule> colors;  // profile rules, first match wins
  bool categories = true;         // one NVTX category per region family
  bool marks = true;              // regiontrace::mark() -> NVTX mark
  bool step_marks = true;         // regiontrace::set_step() -> NVTX mark
  bool step_payload = true;       // the step as int64 payload of ranges and marks

  static SinkSchema schema();
  // Throws std::invalid_argument naming the key and what would be valid.
  static NvtxSettings from(const SinkContext& ctx);
};

}  // namespace regiontrace::nvtx
