#include "thread_stack.hpp"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "region_registry.hpp"

namespace regiontrace::detail {
namespace {

// The per-thread exception globals of the Itanium C++ ABI (section 2.2.2),
// which libstdc++ and libc++abi both lay out so; std::uncaught_exceptions()
// returns the second member.
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

}  // namespace

ThreadStack::ThreadStack(std::uint64_t number) {
  thread = number;
  last_token = first_region_token(number);
  uncaught = &reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals())->uncaught_exceptions;
}

SpanBuffer& ThreadStack::make_spans(std::uint32_t generation) {
  owned_spans_ =
      std::make_unique<SpanBuffer>(thread, static_cast<long>(::syscall(SYS_gettid)), generation);
  RegionStack::spans = owned_spans_.get();
  return *owned_spans_;
}

void ThreadStack::build_path(std::uint32_t valid, std::uint32_t depth) {
  const RegionRegistry& registry = RegionRegistry::instance();
  path_.resize(valid == 0 ? 0 : path_end[valid - 1]);
  for (std::uint32_t i = valid; i < depth; ++i) {
    if (i != 0) path_ += '/';
    path_ += registry.entry(frames[i].id).name;
    path_ids[i] = frames[i].id;
    path_end[i] = static_cast<std::uint32_t>(path_.size());
  }
  path_depth = depth;
  path_text = path_.data();  // the inline event path reads it (appending may move it)
}

}  // namespace regiontrace::detail
