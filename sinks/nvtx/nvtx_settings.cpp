#include "nvtx_settings.hpp"

#include <stdexcept>

namespace regiontrace::nvtx {
namespace {

// The same parse as at start-up, so `regiontrace check` refuses what the
// sink would.
std::string color_rule_problem(const std::string& item) {
  try {
    parse_color_rule(item);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

SinkSchema NvtxSettings::schema() {
  return {
      KeySpec::string("domain", "regiontrace",
                      "NVTX domain of the ranges (empty: NVTX's default domain)"),
      KeySpec::string("prefix", "regiontrace",
                      "range names are `<prefix>.region::<name>`, like the torch_profiler sink's "
                      "spans (FASTVIDEO_NVTX_PROFILE sets `fastvideo`)"),
      KeySpec::list("colors", "",
                    "per-region colours, `region=#RRGGBB` (region name or glob, first match "
                    "wins); before the catalog's colour and the one derived from the name")
          .checked_by(color_rule_problem),
      KeySpec::boolean("categories", true,
                       "put regions in NVTX categories by family (`blocks.3` -> `blocks`)"),
      KeySpec::boolean("marks", true, "regiontrace::mark() becomes an NVTX mark"),
      KeySpec::boolean("step_marks", true,
                       "regiontrace::set_step() becomes an NVTX mark `<prefix>.step`"),
      KeySpec::boolean("step_payload", true,
                       "the step number travels as int64 payload of ranges and marks"),
  };
}

NvtxSettings NvtxSettings::from(const SinkContext& ctx) {
  NvtxSettings s;
  s.domain = ctx.get_string("domain");
  s.prefix = ctx.get_string("prefix");
  if (s.prefix.empty()) {
    throw std::invalid_argument(
        "prefix: must not be empty (range names are `<prefix>.region::<name>`; default "
        "regiontrace)");
  }
  for (const std::string& item : ctx.get_list("colors")) {
    if (item.empty()) continue;
    try {
      s.colors.push_back(parse_color_rule(item));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("colors: ") + e.what());
    }
  }
  s.categories = ctx.get_bool("categories");
  s.marks = ctx.get_bool("marks");
  s.step_marks = ctx.get_bool("step_marks");
  s.step_payload = ctx.get_bool("step_payload");
  return s;
}

}  // namespace regiontrace::nvtx
