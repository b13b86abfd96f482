// The out-of-line half of regiontrace::observe(): tensors and IValues.
#include <ATen/core/Dict.h>
#include <ATen/core/ivalue.h>

#include "ivalue_flatten.hpp"
#include "regiontrace/torch.hpp"

namespace regiontrace::detail {

void observe_tensor(std::string_view label, const at::Tensor& tensor) {
  if (!tensor.defined()) return;
  if (!tensor_wanted_here(TensorOrigin::kObserved)) return;
  dispatch_tensor(label, tensor, TensorOrigin::kObserved);
}

void flatten_ivalue(std::string& label, const c10::IValue& value) {
  flatten_ivalue_as(label, value, TensorOrigin::kObserved, {});
}

void flatten_ivalue_as(std::string& label, const c10::IValue& value, TensorOrigin origin,
                       std::string_view op) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (t.defined()) dispatch_tensor(label, t, origin, op);
  } else if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const std::size_t old = push_index(label, i);
      flatten_ivalue_as(label, elements[i], origin, op);
      label.resize(old);
    }
  } else if (value.isList()) {
    const c10::ArrayRef<c10::IValue> items = value.toListRef();
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::size_t old = push_index(label, i);
      flatten_ivalue_as(label, items[i], origin, op);
      label.resize(old);
    }
  } else if (value.isGenericDict()) {
    std::size_t position = 0;
    for (const auto& entry : value.toGenericDict()) {
      const c10::IValue& key = entry.key();
      std::size_t old = label.size();
      if (key.isString()) {
        old = push_key(label, std::string_view(key.toStringRef()), position);
      } else if (key.isInt()) {
        old = push_key(label, key.toInt(), position);
      } else {
        old = push_index(label, position);
      }
      ++position;
      flatten_ivalue_as(label, entry.value(), origin, op);
      label.resize(old);
    }
  }
  // None, numbers, strings, objects: no tensor to observe.
}

}  // namespace regiontrace::detail
