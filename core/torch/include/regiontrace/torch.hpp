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
//   auto y = regiontrace::forward(model->block, x);   // was: model->block->forward(x)
//   auto z = regiontrace::forward<BlockImpl>(model->blocks[3], x);  // ModuleList element
//
// forward() opens a region named after the module ("blocks.3"), calls its
// forward(), observes what it returns as `out` (nested outputs flattened to
// `out[0]`, `out.key`) and returns it. It takes the module by reference, as a
// std::shared_ptr, as a holder (torch::nn::Linear, Sequential) or an
// AnyModule. ModuleList / ModuleDict elements are plain nn::Modules: name
// their type, forward<BlockImpl>(blocks[i], x), or take
// forward(blocks->ptr<BlockImpl>(i), x).
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
#include <typeinfo>
#include <utility>

#include "regiontrace/detail/tensor_dispatch.hpp"
#include "regiontrace/detail/tensor_flatten.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/torch_export.hpp"

namespace torch::nn {
class Module;
class AnyModule;
}  // namespace torch::nn

namespace regiontrace {

// Hands `value` (a tensor, or a nest of them: see above) to every sink that
// wants tensors in the region open on this thread. Never throws for lack of
// listeners; a sink that fails is switched off by the host.
// Like every entry point, the first call starts regiontrace if nothing has
// (g_tensors_wanted reads true until the start says otherwise).
template <typename T>
inline void observe(std::string_view label, const T& value) {
  if (!detail::g_tensors_wanted.load(std::memory_order_relaxed)) return;
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateUninitialized) {
    detail::lazy_init();
    if (!detail::g_tensors_wanted.load(std::memory_order_relaxed)) return;
  }
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
// module name_modules() never saw, its class name (Module::name()). Cached
// per thread by module address and type until name_modules() runs again.
REGIONTRACE_TORCH_API RegionId module_region_id(const torch::nn::Module& module);
// Tests: how many module_region_id() calls missed the cache and looked the
// name up (under a lock, hashing a string).
REGIONTRACE_TORCH_API std::uint64_t module_region_lookups();

// The region of a module's forward(): looked up only when regions can be
// on (the lookup reads the configuration on first use); with sinks off any
// id will do, since the Region then does nothing.
inline RegionId forward_region_id(const torch::nn::Module& module) {
  return g_state.load(std::memory_order_relaxed) != kStateOff ? module_region_id(module) : 0;
}

// The nn::Module behind what forward() was given; an AnyModule is not one
// but holds one.
template <typename Object>
const torch::nn::Module& module_base(const Object& object) {
  if constexpr (std::is_same_v<Object, torch::nn::AnyModule>) {
    return *object.ptr();
  } else {
    return static_cast<const torch::nn::Module&>(object);
  }
}

// Impl for an Impl, BlockImpl for a TORCH_MODULE(Block) holder.
template <typename T, typename = void>
struct ImplOf {
  using type = T;
};
template <typename T>
struct ImplOf<T, std::enable_if_t<IsModuleHolder<T>::value>> {
  using type = typename T::ContainedType;
};

[[noreturn]] REGIONTRACE_TORCH_API void throw_not_a(const torch::nn::Module& module,
                                                    const char* wanted_type);

// The module as the type the caller named: container elements are handed out
// as std::shared_ptr<nn::Module>, which has no forward().
template <typename Impl, typename M>
Impl& module_as(M& module) {
  auto& base = const_cast<torch::nn::Module&>(module_base(module_object(module)));
  auto* typed = dynamic_cast<Impl*>(&base);
  if (typed == nullptr) throw_not_a(base, typeid(Impl).name());
  return *typed;
}

template <typename Object, typename... Args>
decltype(auto) forward_in_region(Object& object, Args&&... args) {
  using Result = decltype(object.forward(std::forward<Args>(args)...));
  const Region region(forward_region_id(module_base(object)));
  if constexpr (std::is_void_v<Result>) {
    object.forward(std::forward<Args>(args)...);
  } else {
    Result out = object.forward(std::forward<Args>(args)...);
    observe("out", out);
    return out;
  }
}
}  // namespace detail

// Calls module.forward(args...) inside a region named after the module,
// observes its result as `out` and returns it. `module` is an nn::Module
// subclass by reference, a std::shared_ptr to one, a holder
// (torch::nn::Linear, TORCH_MODULE(...), torch::nn::Sequential) or a
// torch::nn::AnyModule (whose forward() returns a Tensor).
template <typename M, typename... Args>
auto forward(M&& module, Args&&... args)
    -> decltype(detail::module_object(module).forward(std::forward<Args>(args)...)) {
  return detail::forward_in_region(detail::module_object(module), std::forward<Args>(args)...);
}

// The same for a module handed out as a plain nn::Module, as ModuleList,
// ModuleDict and Sequential elements are: name its type (the Impl or its
// holder). Throws std::invalid_argument when the module is not one.
//
//   regiontrace::forward<BlockImpl>(model->blocks[3], x, t);   // ModuleList
//   regiontrace::forward<Head>(model->heads["proj"], h);       // ModuleDict
template <typename Impl, typename M, typename... Args>
auto forward(M&& module, Args&&... args)
    -> decltype(std::declval<typename detail::ImplOf<Impl>::type&>().forward(
        std::forward<Args>(args)...)) {
  return detail::forward_in_region(detail::module_as<typename detail::ImplOf<Impl>::type>(module),
                                   std::forward<Args>(args)...);
}

}  // namespace regiontrace
