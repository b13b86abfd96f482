// Machinery behind <regiontrace/torch.hpp>: flattening nested outputs into
// labelled tensors, and finding the nn::Module object behind a reference, a
// shared_ptr or a holder. Not for applications.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "regiontrace/detail/tensor_dispatch.hpp"
#include "regiontrace/torch_export.hpp"

namespace c10 {
struct IValue;
}  // namespace c10

namespace regiontrace::detail {

// Checks whether a sink wants tensors here, then hands over a defined tensor.
REGIONTRACE_TORCH_API void observe_tensor(std::string_view label, const at::Tensor& tensor);
// Flattens an IValue under `label` (already checked: a sink wants tensors).
REGIONTRACE_TORCH_API void flatten_ivalue(std::string& label, const c10::IValue& value);

template <typename T, typename = void>
struct IsOptionalLike : std::false_type {};
template <typename T>
struct IsOptionalLike<T, std::void_t<decltype(std::declval<const T&>().has_value()),
                                     decltype(*std::declval<const T&>())>> : std::true_type {};

template <typename T, typename = void>
struct IsRange : std::false_type {};
template <typename T>
struct IsRange<T, std::void_t<decltype(std::begin(std::declval<const T&>())),
                              decltype(std::end(std::declval<const T&>()))>> : std::true_type {};

template <typename T, typename = void>
struct IsMap : std::false_type {};
template <typename T>
struct IsMap<T, std::void_t<typename T::key_type, typename T::mapped_type>> : IsRange<T> {};

template <typename T>
struct IsTuple : std::false_type {};
template <typename... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};
template <typename A, typename B>
struct IsTuple<std::pair<A, B>> : std::true_type {};

template <typename T>
inline constexpr bool kIsStringLike = std::is_convertible_v<const T&, std::string_view>;

// Appends "[i]" to the label; returns the length to truncate back to.
inline std::size_t push_index(std::string& label, std::size_t i) {
  const std::size_t old = label.size();
  label += '[';
  label += std::to_string(i);
  label += ']';
  return old;
}

template <typename T>
void flatten(std::string& label, const T& value);

template <typename Key>
std::size_t push_key(std::string& label, const Key& key, std::size_t position) {
  const std::size_t old = label.size();
  if constexpr (kIsStringLike<Key>) {
    label += '.';
    label += std::string_view(key);
  } else if constexpr (std::is_integral_v<Key> || std::is_enum_v<Key>) {
    label += '[';
    label += std::to_string(static_cast<long long>(key));
    label += ']';
  } else {
    push_index(label, position);
  }
  return old;
}

template <typename Tuple, std::size_t... I>
void flatten_tuple(std::string& label, const Tuple& t, std::index_sequence<I...>) {
  (
      [&] {
        const std::size_t old = push_index(label, I);
        flatten(label, std::get<I>(t));
        label.resize(old);
      }(),
      ...);
}

template <typename T>
void flatten(std::string& label, const T& value) {
  using D = std::remove_cv_t<T>;
  if constexpr (std::is_base_of_v<at::Tensor, D>) {
    if (value.defined()) dispatch_tensor(label, value, TensorOrigin::kObserved);
  } else if constexpr (std::is_same_v<D, c10::IValue>) {
    flatten_ivalue(label, value);
  } else if constexpr (std::is_arithmetic_v<D> || kIsStringLike<D>) {
    // Numbers and strings carry no tensor.
  } else if constexpr (IsOptionalLike<D>::value) {
    if (value.has_value()) flatten(label, *value);
  } else if constexpr (IsTuple<D>::value) {
    flatten_tuple(label, value, std::make_index_sequence<std::tuple_size_v<D>>{});
  } else if constexpr (IsMap<D>::value) {
    std::size_t position = 0;
    for (const auto& [key, item] : value) {
      const std::size_t old = push_key(label, key, position++);
      flatten(label, item);
      label.resize(old);
    }
  } else if constexpr (IsRange<D>::value) {
    std::size_t i = 0;
    for (const auto& item : value) {
      const std::size_t old = push_index(label, i++);
      flatten(label, item);
      label.resize(old);
    }
  }
  // Anything else holds no tensor we know how to reach: nothing to observe.
}

// The slow half of observe(): a sink wants tensors somewhere.
template <typename T>
void observe_value(std::string_view label, const T& value) {
  if constexpr (std::is_base_of_v<at::Tensor, std::remove_cv_t<T>>) {
    observe_tensor(label, value);
  } else {
    if (!tensor_wanted_here(TensorOrigin::kObserved)) return;
    std::string buffer(label);
    flatten(buffer, value);
  }
}

// --- the module behind a reference, a shared_ptr or a holder ----------------

template <typename T, typename = void>
struct IsModuleHolder : std::false_type {};
template <typename T>
struct IsModuleHolder<T, std::void_t<typename T::ContainedType, decltype(std::declval<T&>().ptr())>>
    : std::true_type {};

template <typename T>
struct IsSharedPtr : std::false_type {};
template <typename T>
struct IsSharedPtr<std::shared_ptr<T>> : std::true_type {};

template <typename M>
decltype(auto) module_object(M& module) {
  using D = std::remove_cv_t<M>;
  if constexpr (IsModuleHolder<D>::value) {
    return *module.ptr();
  } else if constexpr (IsSharedPtr<D>::value) {
    return *module;
  } else {
    return module;  // M&: decltype of a reference parameter
  }
}

}  // namespace regiontrace::detail
