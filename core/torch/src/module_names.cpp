// name_modules() and the region each module call opens. C++ modules have no
// forward hooks and no name of their own: the qualified name exists only as
// a path from the root, so we walk named_modules() once and remember each
// module's name (and region id) by address.
#include <c10/util/Type.h>
#include <torch/nn/module.h>

#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "regiontrace/torch.hpp"

namespace regiontrace {
namespace {

struct NamedModule {
  std::string name;
  RegionId region = 0;
};

class ModuleNames {
 public:
  static ModuleNames& instance() {
    static ModuleNames* names = new ModuleNames();  // never destroyed: used at exit
    return *names;
  }

  void set(const torch::nn::Module* module, std::string name) {
    const RegionId id = declare_region(name, module->name() + " module");
    std::unique_lock<std::shared_mutex> lock(mutex_);
    by_address_[module] = NamedModule{std::move(name), id};
  }

  // Copies out under the lock: name_modules() may replace an entry meanwhile.
  bool find_region(const torch::nn::Module* module, RegionId* region) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = by_address_.find(module);
    if (it == by_address_.end()) return false;
    *region = it->second.region;
    return true;
  }
  std::string find_name(const torch::nn::Module* module) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = by_address_.find(module);
    return it == by_address_.end() ? std::string() : it->second.name;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<const torch::nn::Module*, NamedModule> by_address_;
};

}  // namespace

void name_modules(const torch::nn::Module& model, std::string_view prefix) {
  const std::string root = prefix.empty() ? std::string("model") : std::string(prefix);
  ModuleNames& names = ModuleNames::instance();
  names.set(&model, root);
  for (const auto& item : model.named_modules(std::string(), /*include_self=*/false)) {
    std::string name = prefix.empty() ? item.key() : root + "." + item.key();
    names.set(item.value().get(), std::move(name));
  }
}

std::string module_name(const torch::nn::Module& module) {
  return ModuleNames::instance().find_name(&module);
}

namespace detail {

RegionId module_region_id(const torch::nn::Module& module) {
  if (g_state.load(std::memory_order_relaxed) == kStateUninitialized) lazy_init();
  RegionId region = 0;
  if (ModuleNames::instance().find_region(&module, &region)) return region;
  return region_id(module.name());
}

void throw_not_a(const torch::nn::Module& module, const char* wanted_type) {
  const std::string name = module_name(module);
  throw std::invalid_argument("regiontrace::forward<" + c10::demangle(wanted_type) +
                              ">: the module " + (name.empty() ? "" : "`" + name + "` ") + "is a " +
                              module.name() + ", not that type");
}

}  // namespace detail
}  // namespace regiontrace
