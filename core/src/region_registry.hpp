// Every region the process knows: declared ones (catalogs, RT_DECLARE_REGION)
// and ones registered by first use. Ids are dense and never reused; entries
// never move, so readers on the hot path look them up without a lock.
#pragma once

#include "regiontrace/export.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

struct RegionEntry {
  RegionId id = 0;
  std::string name;
  std::string description;
  std::uint32_t color = 0;  // 0xRRGGBB, 0 = none given
  bool declared = false;    // from a catalog or RT_DECLARE_REGION, not only used
  bool in_catalog = false;  // from a catalog file: a filter name close to it is a typo
  // The dispatcher generation in which a sink-selected frame of this region
  // was last pushed: selected names never reached are reported at shutdown.
  mutable std::atomic<std::uint32_t> entered_generation{0};
};

class REGIONTRACE_INTERNAL RegionRegistry {
 public:
  static RegionRegistry& instance();

  RegionId intern(std::string_view name);
  RegionId declare(std::string_view name, std::string_view description, std::uint32_t color,
                   const std::string& source = {});
  std::optional<RegionId> find(std::string_view name) const;
  // The long name a short one stands for ("model_loading" ->
  // "profiler_region_model_loading"), or the name itself.
  std::string canonical(std::string_view name) const;
  void add_short_prefix(const std::string& prefix);
  std::vector<std::string> short_prefixes() const;

  const RegionEntry& entry(RegionId id) const {
    return chunks_[id >> kChunkBits].load(std::memory_order_acquire)[id & kChunkMask];
  }
  std::size_t size() const { return size_.load(std::memory_order_acquire); }
  std::vector<const RegionEntry*> declared() const;

  // Called under the registry lock for every new region, before its id is
  // handed out: the dispatcher routes it there.
  void set_new_region_hook(std::function<void(const RegionEntry&)> hook);
  std::mutex& mutex() { return mutex_; }

 private:
  RegionRegistry();
  std::optional<RegionId> find_locked(std::string_view name) const;
  RegionEntry& create_locked(std::string_view name);

  static constexpr unsigned kChunkBits = 10;
  static constexpr unsigned kChunkMask = (1u << kChunkBits) - 1;
  static constexpr std::size_t kMaxChunks = 4096;  // 4M regions

  mutable std::mutex mutex_;
  std::unique_ptr<std::atomic<RegionEntry*>[]> chunks_;
  std::atomic<std::size_t> size_{0};
  std::unordered_map<std::string, RegionId> by_name_;
  std::vector<std::string> short_prefixes_;
  std::function<void(const RegionEntry&)> hook_;
};

// Parses a region catalog (YAML) and declares its regions. Throws
// regiontrace::Error naming `source` and the line.
REGIONTRACE_INTERNAL void load_region_catalog(const std::string& yaml_text,
                                              const std::string& source, RegionRegistry& registry);
REGIONTRACE_INTERNAL void load_region_catalog_file(const std::string& path,
                                                   RegionRegistry& registry);
// Parses "#RRGGBB", "0xRRGGBB" or "RRGGBB"; false when it is none of those.
REGIONTRACE_INTERNAL bool parse_color(std::string_view text, std::uint32_t* out);

// The catalogs compiled into the library (config/regions/*.yaml).
extern const char* const kBuiltinCatalogs[];
extern const char* const kBuiltinCatalogNames[];
extern const int kBuiltinCatalogCount;

}  // namespace regiontrace::detail
