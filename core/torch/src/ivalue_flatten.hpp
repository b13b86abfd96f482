// Flattening an IValue into labelled tensors, for observe() and for the op
// observer (which hands op outputs over with their op name).
#pragma once

#include <string>
#include <string_view>

#include "regiontrace/sdk/events.hpp"

namespace c10 {
struct IValue;
}  // namespace c10

namespace regiontrace::detail {

void flatten_ivalue_as(std::string& label, const c10::IValue& value, TensorOrigin origin,
                       std::string_view op);

}  // namespace regiontrace::detail
