// regiontrace: mark the phases of your program once, choose per run what
// happens at those marks (torch profiler, NVTX ranges, activation statistics,
// memory accounting, your own sinks).
//
// The calls you need:
//
//   #include <regiontrace/regiontrace.hpp>
//
//   RT_REGION("inference_denoising");        // the rest of this scope is a region
//   regiontrace::set_step(i);                // the step events carry
//   regiontrace::mark("cfg_switch");         // an instant event
//
// Nothing else is required: the first region reads the configuration
// (REGIONTRACE_CONFIG=profile.yaml, REGIONTRACE_SINKS=nvtx, ...). With no sink
// configured a region costs one relaxed atomic load and a branch.
//
// More:
//   regiontrace::Region r("name");           // the same as an object
//   auto t = regiontrace::begin("load");     // regions that do not follow a scope
//   regiontrace::end(t);
//   regiontrace::in_region("name", fn, args...);  // call fn inside a region
//   RT_DECLARE_REGION(kDenoise, "inference_denoising", "the denoising loop");
//   regiontrace::snapshot("before_save");    // ask sinks for a snapshot
//   regiontrace::init(options);  regiontrace::shutdown();
//
// Tensors: <regiontrace/torch.hpp> (library RegionTrace::torch).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "regiontrace/detail/region_stack.hpp"
#include "regiontrace/detail/region_token.hpp"
#include "regiontrace/export.hpp"

namespace regiontrace {

using RegionId = std::uint32_t;

// A start-up error: bad configuration, a plugin that does not load, an output
// folder that cannot be written. The message names the file, line, key or
// path and what would be valid.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Programmatic configuration: the highest-precedence layer.
struct Options {
  std::vector<std::string> profiles;          // YAML files, after REGIONTRACE_CONFIG's
  std::map<std::string, std::string> values;  // "sinks.nvtx.domain" -> "train"
  bool read_environment = true;               // false: ignore REGIONTRACE_* and FASTVIDEO_*

  Options& set(std::string key, std::string value) {
    values[std::move(key)] = std::move(value);
    return *this;
  }
};

// Reads the configuration and starts the sinks. Optional: the first region
// (or step, mark, snapshot) does it with default Options. Calling it again
// after shutdown() starts over; calling it while running is a no-op that keeps
// the running sinks (one profiler per process). Throws regiontrace::Error.
// The implicit start never throws: it prints the error once and applies
// `on_error` (default `exit`: status 2; `continue`: sinks stay off).
REGIONTRACE_API void init(const Options& options = {});
// Flushes and closes every sink. Idempotent; also runs at normal exit and on
// SIGINT/SIGTERM.
REGIONTRACE_API void shutdown();
// Waits until what every running sink accepted so far is written (JSONL
// records in their file, ...); the sinks go on. For a reader in the same
// process, e.g. a test that reads the file after its last traced call.
REGIONTRACE_API void flush();
// True while at least one sink runs.
REGIONTRACE_API bool enabled();

// The id of a region, registering it on first use. Short names
// ("model_loading") resolve to the catalog's long ones.
REGIONTRACE_API RegionId region_id(std::string_view name);
// Declares a region with a description (and 0xRRGGBB colour, 0 = derived).
REGIONTRACE_API RegionId declare_region(std::string_view name, std::string_view description,
                                        std::uint32_t color = 0);

REGIONTRACE_API void set_step(std::int64_t step);
REGIONTRACE_API std::int64_t step();  // kNoStep (INT64_MIN) until set_step()
REGIONTRACE_API void mark(std::string_view name);
REGIONTRACE_API void snapshot(std::string_view reason);

namespace detail {
enum : std::uint8_t { kStateUninitialized = 0, kStateOff = 1, kStateOn = 2 };
// The only thing the disabled hot path reads.
extern REGIONTRACE_API std::atomic<std::uint8_t> g_state;

// The implicit start: never throws (see init()).
REGIONTRACE_API void lazy_init();
// enter(id) (detail/region_stack.hpp) returns a token: 0 = nothing to end;
// layout in detail/region_token.hpp. leave_scope(token) ends a scope's
// region: whether an exception is leaving it (more uncaught than when it
// began) is the library's to tell, as it keeps the count of a delivered
// region's begin, so the inline code reads no exception state.
REGIONTRACE_API void leave(std::uint64_t token, bool unwinding);
}  // namespace detail

// A region open for the lifetime of the object.
class Region {
 public:
  // Starts regiontrace if nothing has (as every entry point does); once it is
  // on or off, one load and one branch decide.
  __attribute__((always_inline)) explicit Region(RegionId id) {
    const std::uint8_t state = detail::g_state.load(std::memory_order_relaxed);
    if (state == detail::kStateOn) {
      token_ = detail::enter_inline(id);
    } else if (state == detail::kStateUninitialized) {
      token_ = start_and_open(id);
    }
  }
  // Looks the name up on every construction; prefer RT_REGION in hot code.
  explicit Region(std::string_view name) {
    if (detail::g_state.load(std::memory_order_relaxed) != detail::kStateOff) {
      RegionId id = region_id(name);  // initialises on first use
      if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
        token_ = detail::enter_inline(id);
      }
    }
  }
  __attribute__((always_inline)) ~Region() {
    if (token_ != 0) detail::leave_scope_inline(token_);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  // Static and returning the token: a member taking `this` kept the token
  // in memory on the hot path (three loads and stores a pair).
  __attribute__((noinline, cold)) static std::uint64_t start_and_open(RegionId id) {
    detail::lazy_init();
    if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
      return detail::enter_inline(id);
    }
    return 0;
  }
  std::uint64_t token_ = 0;
};

// A region that does not follow a C++ scope.
class Token {
 public:
  Token() = default;
  bool valid() const { return value_ != 0; }

 private:
  friend REGIONTRACE_API Token begin(RegionId id);
  friend REGIONTRACE_API void end(Token token);
  explicit Token(std::uint64_t v) : value_(v) {}
  std::uint64_t value_ = 0;
};

REGIONTRACE_API Token begin(RegionId id);
inline Token begin(std::string_view name) {
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOff) return Token();
  return begin(region_id(name));
}
// Ending regions out of order is reported once and repaired: the regions
// opened inside the ended one are closed and reopened around it.
REGIONTRACE_API void end(Token token);

// Calls fn(args...) inside the region and returns its result.
template <typename Fn, typename... Args>
decltype(auto) in_region(std::string_view name, Fn&& fn, Args&&... args) {
  Region region(name);
  return std::forward<Fn>(fn)(std::forward<Args>(args)...);
}

}  // namespace regiontrace

#define RT_CONCAT_INNER(a, b) a##b
#define RT_CONCAT(a, b) RT_CONCAT_INNER(a, b)

// The name is resolved once per call site (a function-local static).
#define RT_REGION_WITH_COUNTER(name, n)                              \
  static const ::regiontrace::RegionId RT_CONCAT(rt_region_id_, n) = \
      ::regiontrace::region_id(name);                                \
  const ::regiontrace::Region RT_CONCAT(rt_region_, n)(RT_CONCAT(rt_region_id_, n))
#define RT_REGION(name) RT_REGION_WITH_COUNTER(name, __COUNTER__)

// At namespace scope: `RT_DECLARE_REGION(kLoad, "model_loading", "weights")`
// declares the region (for filters and catalogs) and names its id.
#define RT_DECLARE_REGION(id_name, name, description) \
  static const ::regiontrace::RegionId id_name = ::regiontrace::declare_region(name, description)
