// name_modules() and the region each module call opens. C++ modules have no
// forward hooks and no name of their own: the qualified name exists only as
// a path from the root, so we walk named_modules() once and remember each
// module's name (and region id) by address.
//
// forward() asks for its module's region on every call while regions can be
// on. A small per-thread cache answers from the module's address and type:
// no lock, no string hashed. name_modules() bumps a generation that empties
// every thread's cache, so a module named (or renamed) later is seen.
#include <c10/util/Type.h>
#include <torch/nn/module.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <typeinfo>
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
    generation_.fetch_add(1, std::memory_order_release);
  }
  // Changes whenever a name changes: what the per-thread caches check.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

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
  std::atomic<std::uint64_t> generation_{1};  // 0 marks an empty cache entry
};

// One thread's answers, by module address, two ways per set: a module and
// the child it calls (blocks.2 and blocks.2.fc) may map to the same set, and
// with one way each call would evict the other's answer and look its name up
// again. The type is part of the key: a module freed and another of a
// different class built at the same address must not inherit its region (an
// unnamed module's region is its class name).
class RegionCache {
 public:
  static constexpr std::size_t kSets = 32;

  RegionId* find(const torch::nn::Module* module, const std::type_info* type,
                 std::uint64_t generation) {
    Set& set = sets_[index(module)];
    for (int w = 0; w < 2; ++w) {
      Entry& e = set.ways[w];
      if (e.module == module && e.type == type && e.generation == generation) {
        set.recent = w;
        return &e.region;
      }
    }
    return nullptr;
  }
  void store(const torch::nn::Module* module, const std::type_info* type, std::uint64_t generation,
             RegionId region) {
    Set& set = sets_[index(module)];
    // The module's stale answer if it has one, else the way used less recently.
    int way = 1 - set.recent;
    if (set.ways[set.recent].module == module) way = set.recent;
    set.ways[way] = Entry{module, type, generation, region};
    set.recent = way;
  }

 private:
  struct Entry {
    const torch::nn::Module* module = nullptr;
    const std::type_info* type = nullptr;
    std::uint64_t generation = 0;
    RegionId region = 0;
  };
  struct Set {
    Entry ways[2];
    int recent = 0;
  };
  static std::size_t index(const torch::nn::Module* module) {
    const auto p = reinterpret_cast<std::uintptr_t>(module);
    return ((p >> 4) ^ (p >> 12)) & (kSets - 1);
  }
  Set sets_[kSets];
};

thread_local RegionCache t_region_cache;
std::atomic<std::uint64_t> g_region_lookups{0};

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
  ModuleNames& names = ModuleNames::instance();
  // Read before looking up: a name_modules() racing with the lookup leaves
  // an entry of the old generation, looked up again on the next call.
  const std::uint64_t generation = names.generation();
  const std::type_info* type = &typeid(module);
  RegionCache& cache = t_region_cache;
  if (const RegionId* cached = cache.find(&module, type, generation)) return *cached;
  g_region_lookups.fetch_add(1, std::memory_order_relaxed);
  RegionId region = 0;
  if (!names.find_region(&module, &region)) region = region_id(module.name());
  cache.store(&module, type, generation, region);
  return region;
}

std::uint64_t module_region_lookups() {
  return g_region_lookups.load(std::memory_order_relaxed);
}

void throw_not_a(const torch::nn::Module& module, const char* wanted_type) {
  const std::string name = module_name(module);
  throw std::invalid_argument("regiontrace::forward<" + c10::demangle(wanted_type) +
                              ">: the module " + (name.empty() ? "" : "`" + name + "` ") + "is a " +
                              module.name() + ", not that type");
}

}  // namespace detail
}  // namespace regiontrace
