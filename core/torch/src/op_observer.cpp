// The opt-in aten-op observer: a global RecordFunction callback that hands
// every aten op's outputs to the sinks asking for op outputs, inside their
// selected regions. A global callback makes every op build its
// RecordFunction, so it is installed only while such a sink runs: the
// dispatcher flips the switch registered here.
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <mutex>
#include <string>
#include <thread>

#include "ivalue_flatten.hpp"
#include "regiontrace/detail/tensor_dispatch.hpp"

namespace regiontrace::detail {
namespace {

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& /*fn*/) {
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext* /*ctx*/) {
  if (!tensor_wanted_here(TensorOrigin::kOpOutput)) return;
  // What sinks do with the outputs (statistics) runs aten code too: neither
  // this observer nor a running torch profiler may see it.
  const at::DisableRecordFunctionGuard no_recording;
  const std::string_view op = fn.name();
  const auto& outputs = fn.outputs();
  std::string label = "out";
  if (outputs.size() == 1) {
    flatten_ivalue_as(label, outputs[0], TensorOrigin::kOpOutput, op);
    return;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    label.resize(3);
    label += '[';
    label += std::to_string(i);
    label += ']';
    flatten_ivalue_as(label, outputs[i], TensorOrigin::kOpOutput, op);
  }
}

std::mutex g_switch_mutex;
bool g_installed = false;
at::CallbackHandle g_handle = 0;

void switch_op_observer(bool on) {
  std::lock_guard<std::mutex> lock(g_switch_mutex);
  if (on == g_installed) return;
  if (on) {
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(&on_op_start, &on_op_end)
                                         .needsInputs(false)
                                         .needsOutputs(true)
                                         .scopes({at::RecordScope::FUNCTION}));
  } else {
    // On a thread of its own: removeCallback looks in the calling thread's
    // callback list first, and the main thread no longer has one when the
    // exit handler switches the observer off (its thread_locals are gone).
    const at::CallbackHandle handle = g_handle;
    std::thread([handle] { at::removeCallback(handle); }).join();
    g_handle = 0;
  }
  g_installed = on;
}

// Registered when the library loads, so that the dispatcher can install the
// observer as soon as a sink asks for op outputs.
const bool g_registered = [] {
  set_op_observer_switch(&switch_op_observer);
  return true;
}();

}  // namespace
}  // namespace regiontrace::detail
