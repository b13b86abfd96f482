// regiontrace for libtorch: hand tensors to the sinks that want them, and
// trace torch::nn modules with one changed line per call site.
//
// The calls you need:
//
//   #include <regiontrace/torch.hpp>          // library RegionTrace::torch
//
//   regiontrace::observe("out", hidden);       // a tensor, to whoever listens
//   regiontrace::observe("kv", std::tuple{k, v});   // labels kv[0], kv[1]
//
//   regiontrace::name_modules(model);          // once: remember qualified names
//   auto y = regiontrace::forward(model->blocks[3], x);   // was: blocks[3]->forward(x)
//
// forward() opens a region named after the module ("blocks.3"), calls its
// forward(), observes what it returns as `out` (nested outputs flattened to
// `out[0]`, `out.key`) and returns it. It takes the module by reference, as a
// std::shared_ptr, or as a holder (torch::nn::Linear).
//
// Cost: with no sink asking for tensors, observe() is one relaxed atomic load
// and a branch; forward() with no sink configured is that plus a region's
// disabled path. Nested outputs are only flattened when a sink wants tensors
// in the current region.
//
// Labels of nested values: vectors, arrays, tuples, pairs and IValue lists or
// tuples give `label[i]`; maps and IValue dicts with string keys give
// `label.key` (other keys `label[key]`); optionals are looked through; other
// leaves (numbers, strings, None) are skipped. Undefined tensors are skipped.
//
// Statistics of a tensor: <regiontrace/tensor_stats.hpp>.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "regiontrace/detail/tensor_dispatch.hpp"
#include "regiontrace/detail/tensor_flatten.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/torch_export.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace regiontrace {

// Hands `value` (a tensor, or a nest of them: see above) to every sink that
// wants tensors in the region open on this thread. Never throws for lack of
// listeners; a sink that fails is switched off by the host.
template <typename T>
inline void observe(std::string_view label, const T& value) {
  if (!detail::g_tensors_wanted.load(std::memory_order_relaxed)) return;
  detail::observe_value(label, value);
}

// Remembers the qualified name of `model` and of every module below it, as
// named_modules() spells them ("blocks.3.attn"), so that forward() can name
// its regions. With a prefix, names are "prefix.blocks.3" as Python's
// named_modules(prefix=...) gives them. The root itself (whose qualified name
// is empty) is named `prefix`, or "model" without one. Call it again after
// building a new model: names are remembered by module address. Thread-safe.
REGIONTRACE_TORCH_API void name_modules(const torch::nn::Module& model,
                                        std::string_view prefix = {});
template <typename M, typename = std::enable_if_t<!std::is_base_of_v<
                          torch::nn::Module, std::remove_cv_t<std::remove_reference_t<M>>>>>
void name_modules(const M& model, std::string_view prefix = {}) {
  name_modules(static_cast<const torch::nn::Module&>(detail::module_object(model)), prefix);
}

// The name name_modules() gave this module, empty when it has none.
REGIONTRACE_TORCH_API std::string module_name(const torch::nn::Module& module);
template <typename M, typename = std::enable_if_t<!std::is_base_of_v<
                          torch::nn::Module, std::remove_cv_t<std::remove_reference_t<M>>>>>
std::string module_name(const M& module) {
  return module_name(static_cast<const torch::nn::Module&>(detail::module_object(module)));
}

namespace detail {
// The region forward() opens for a module: its qualified name, or, for a
// module name_modules() never saw, its class name (Module::name()).
REGIONTRACE_TORCH_API RegionId module_region_id(const torch::nn::Module& module);

// A region around one module call, opened only while regiontrace may be on.
// The region of a module's forward(): looked up only when regions can be
// on (the lookup reads the configuration on first use); with sinks off any
// id will do, since the Region then does nothing.
inline RegionId forward_region_id(const torch::nn::Module& module) {
  return g_state.load(std::memory_order_relaxed) != kStateOff ? module_region_id(module) : 0;
}
}  // namespace detail

// Calls module.forward(args...) inside a region named after the module,
// observes its result as `out` and returns it. `module` is an nn::Module
// subclass by reference, a std::shared_ptr to one, or a holder
// (torch::nn::Linear, TORCH_MODULE(...)).
template <typename M, typename... Args>
auto forward(M&& module, Args&&... args)
    -> decltype(detail::module_object(module).forward(std::forward<Args>(args)...)) {
  auto& object = detail::module_object(module);
  using Result = decltype(object.forward(std::forward<Args>(args)...));
  const Region region(detail::forward_region_id(static_cast<const torch::nn::Module&>(object)));
  if constexpr (std::is_void_v<Result>) {
    object.forward(std::forward<Args>(args)...);
  } else {
    Result out = object.forward(std::forward<Args>(args)...);
    observe("out", out);
    return out;
  }
}

}  // namespace regiontrace
