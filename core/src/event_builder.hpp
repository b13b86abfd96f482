// What the dispatcher's files share about the calling thread: which sinks are
// inside a selected region there, and how the fields every event carries are
// filled in. One definition each, so the hot path and the five event kinds
// cannot drift apart.
#pragma once

#include <cstdint>
#include <type_traits>

#include "routing_table.hpp"
#include "thread_stack.hpp"

namespace regiontrace::detail {

// True when the innermost open frame belongs to the running start-up.
inline bool top_is_current(const ThreadStack* stack, const RoutingTable& table) {
  return stack != nullptr && !stack->empty() && stack->top().generation == table.generation();
}

// The sinks that are inside a region they selected on this thread (or that
// select every region): the innermost open frame knows, when it was opened
// under the running start-up; otherwise only the unfiltered sinks are.
inline std::uint64_t inside_mask(const ThreadStack* stack, const RoutingTable& table) {
  return top_is_current(stack, table) ? stack->top().inside : table.unfiltered_mask;
}

// The sinks that asked for tensors of this origin.
inline std::uint64_t tensor_family(const RoutingTable& table, TensorOrigin origin) {
  return origin == TensorOrigin::kOpOutput ? table.op_mask : table.tensor_mask;
}

template <typename Event, typename = void>
struct HasPath : std::false_type {};
template <typename Event>
struct HasPath<Event, std::void_t<decltype(Event::path)>> : std::true_type {};

}  // namespace regiontrace::detail
