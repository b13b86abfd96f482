// The public entry points of <regiontrace/regiontrace.hpp>.
#include "dispatcher.hpp"
#include "lifecycle.hpp"
#include "logger.hpp"
#include "region_registry.hpp"
#include "regiontrace/detail/tensor_dispatch.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/thread_step.hpp"

namespace regiontrace {
namespace detail {

std::atomic<std::uint8_t> g_state{kStateUninitialized};
std::atomic<bool> g_tensors_wanted{true};  // until started: see tensor_dispatch.hpp

void lazy_init() {
  if (g_state.load() == kStateUninitialized) start_implicitly();
}

namespace {
// The entry points that take no name start regiontrace the way a named
// region does; the check sits outside their fast paths.
inline void start_if_first() {
  if (g_state.load(std::memory_order_relaxed) == kStateUninitialized) lazy_init();
}
}  // namespace

bool tensor_wanted_here(TensorOrigin origin) {
  return Dispatcher::instance().tensor_wanted_here(origin);
}
void dispatch_tensor(std::string_view label, const at::Tensor& tensor, TensorOrigin origin,
                     std::string_view op) {
  Dispatcher::instance().tensor(label, tensor, origin, op);
}
void set_op_observer_switch(void (*fn)(bool on)) {
  Dispatcher::instance().set_op_observer_switch(fn);
}

}  // namespace detail

void init(const Options& options) {
  try {
    detail::start(options);
  } catch (const Error&) {
    if (detail::g_state.load() == detail::kStateUninitialized) {
      detail::g_tensors_wanted.store(false);
      detail::g_state.store(detail::kStateOff);
    }
    throw;
  }
}

void shutdown() {
  detail::stop();
}

void flush() {
  if (detail::g_state.load() != detail::kStateOn) return;
  detail::Dispatcher::instance().flush_sinks();
}

bool enabled() {
  return detail::g_state.load() == detail::kStateOn;
}

RegionId region_id(std::string_view name) {
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateUninitialized) {
    detail::lazy_init();
  }
  return detail::RegionRegistry::instance().intern(name);
}

RegionId declare_region(std::string_view name, std::string_view description, std::uint32_t color) {
  // May run during static initialisation: no configuration is read here.
  return detail::RegionRegistry::instance().declare(name, description, color);
}

void set_step(std::int64_t step) {
  detail::start_if_first();
  detail::Dispatcher::instance().set_step(step);
}
std::int64_t step() {
  return detail::Dispatcher::instance().step();
}
void set_thread_step(std::int64_t step) {
  detail::Dispatcher::instance().set_thread_step(step);
}
std::int64_t thread_step() {
  return detail::Dispatcher::instance().thread_step();
}

void mark(std::string_view name) {
  detail::start_if_first();
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
    detail::Dispatcher::instance().mark(name);
  }
}

void snapshot(std::string_view reason) {
  detail::start_if_first();
  if (detail::g_state.load(std::memory_order_relaxed) == detail::kStateOn) {
    detail::Dispatcher::instance().snapshot(reason);
  }
}

Token begin(RegionId id) {
  detail::start_if_first();
  if (detail::g_state.load(std::memory_order_relaxed) != detail::kStateOn) return Token();
  return Token(detail::enter(id));
}

void end(Token token) {
  if (token.value_ != 0) detail::leave(token.value_, false);
}

}  // namespace regiontrace
