#include "region_registry.hpp"

#include "logger.hpp"

namespace regiontrace::detail {

RegionRegistry& RegionRegistry::instance() {
  // Never destroyed: regions may be entered from exit handlers and other
  // libraries' static destructors.
  static RegionRegistry* registry = new RegionRegistry();
  return *registry;
}

RegionRegistry::RegionRegistry() : chunks_(new std::atomic<RegionEntry*>[kMaxChunks]) {
  for (std::size_t i = 0; i < kMaxChunks; ++i) chunks_[i].store(nullptr);
  for (int i = 0; i < kBuiltinCatalogCount; ++i) {
    load_region_catalog(kBuiltinCatalogs[i], kBuiltinCatalogNames[i], *this);
  }
}

RegionEntry& RegionRegistry::create_locked(std::string_view name) {
  const std::size_t id = size_.load(std::memory_order_relaxed);
  const std::size_t chunk = id >> kChunkBits;
  if (chunk >= kMaxChunks) {
    log_once(LogLevel::kError, "registry-full", "too many distinct region names; reusing the last");
    return chunks_[kMaxChunks - 1].load()[kChunkMask];
  }
  RegionEntry* block = chunks_[chunk].load(std::memory_order_relaxed);
  if (block == nullptr) {
    block = new RegionEntry[std::size_t{1} << kChunkBits];
    chunks_[chunk].store(block, std::memory_order_release);
  }
  RegionEntry& e = block[id & kChunkMask];
  e.id = static_cast<RegionId>(id);
  e.name = std::string(name);
  by_name_.emplace(e.name, e.id);
  size_.store(id + 1, std::memory_order_release);
  return e;
}

std::optional<RegionId> RegionRegistry::find_locked(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it != by_name_.end()) return it->second;
  for (const std::string& prefix : short_prefixes_) {
    auto lit = by_name_.find(prefix + std::string(name));
    if (lit != by_name_.end()) return lit->second;
  }
  return std::nullopt;
}

std::optional<RegionId> RegionRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_locked(name);
}

std::string RegionRegistry::canonical(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto id = find_locked(name);
  return id ? entry(*id).name : std::string(name);
}

RegionId RegionRegistry::intern(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto id = find_locked(name)) return *id;
  RegionEntry& e = create_locked(name);
  if (hook_) hook_(e);
  return e.id;
}

RegionId RegionRegistry::declare(std::string_view name, std::string_view description,
                                 std::uint32_t color, const std::string& source) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_name_.find(std::string(name));
  RegionEntry* e = nullptr;
  if (it != by_name_.end()) {
    e = const_cast<RegionEntry*>(&entry(it->second));
    if (e->declared && !description.empty() && e->description != description && !source.empty()) {
      log(LogLevel::kDebug, "region '" + e->name + "' declared again by " + source);
    }
  } else {
    e = &create_locked(name);
    if (hook_) hook_(*e);
  }
  e->declared = true;
  if (!source.empty()) e->in_catalog = true;
  if (!description.empty()) e->description = std::string(description);
  if (color != 0) e->color = color;
  return e->id;
}

void RegionRegistry::add_short_prefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string& p : short_prefixes_) {
    if (p == prefix) return;
  }
  short_prefixes_.push_back(prefix);
}

std::vector<std::string> RegionRegistry::short_prefixes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return short_prefixes_;
}

std::vector<const RegionEntry*> RegionRegistry::declared() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const RegionEntry*> out;
  const std::size_t n = size_.load();
  for (std::size_t i = 0; i < n; ++i) {
    const RegionEntry& e = entry(static_cast<RegionId>(i));
    if (e.declared) out.push_back(&e);
  }
  return out;
}

void RegionRegistry::set_new_region_hook(std::function<void(const RegionEntry&)> hook) {
  hook_ = std::move(hook);  // caller holds mutex()
}

}  // namespace regiontrace::detail
