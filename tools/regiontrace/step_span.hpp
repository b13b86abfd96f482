// Step spans as the trace tools recognise them: `ProfilerStep#<n>` in
// Kineto's category (user_annotation; cpu_op in older libtorch), as
// torch.profiler and regiontrace write them, and category "step", which
// regiontrace wrote before it took Kineto's category (traces already on
// disk). Their step is args.step, else the <n> of the name.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace regiontrace::cli {

inline constexpr std::string_view kStepSpanPrefix = "ProfilerStep#";

inline bool is_step_span(std::string_view category, std::string_view name) {
  if (category == "step") return true;
  return (category == "user_annotation" || category == "cpu_op") &&
         name.substr(0, kStepSpanPrefix.size()) == kStepSpanPrefix;
}

inline std::optional<std::int64_t> step_of_step_name(std::string_view name) {
  if (name.substr(0, kStepSpanPrefix.size()) != kStepSpanPrefix) return std::nullopt;
  const std::string_view digits = name.substr(kStepSpanPrefix.size());
  std::int64_t step = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return step;
}

}  // namespace regiontrace::cli
