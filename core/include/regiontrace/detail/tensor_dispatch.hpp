// The bridge core/torch uses to hand tensors to the dispatcher. Not for
// applications: use <regiontrace/torch.hpp>.
#pragma once

#include <atomic>
#include <string_view>

#include "regiontrace/export.hpp"
#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

// True while at least one running sink asked for tensors: the one load
// observe() makes when nobody listens. True before the start, too, so that
// observe() can be the call that starts regiontrace; every way to the
// on or off state sets it.
extern REGIONTRACE_API std::atomic<bool> g_tensors_wanted;

// Does a tensor sink have a selected region open on this thread (and the
// current step selected)? Lets callers skip flattening nested outputs.
REGIONTRACE_API bool tensor_wanted_here(TensorOrigin origin);
REGIONTRACE_API void dispatch_tensor(std::string_view label, const at::Tensor& tensor,
                                     TensorOrigin origin, std::string_view op = {});
// core/torch registers the switch of its aten-op observer; the dispatcher
// turns it on while a running sink asks for op outputs.
REGIONTRACE_API void set_op_observer_switch(void (*fn)(bool on));

}  // namespace regiontrace::detail
