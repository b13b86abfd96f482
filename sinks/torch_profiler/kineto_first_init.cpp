#include "kineto_first_init.hpp"

#include <ATen/Context.h>
#include <c10/core/DeviceType.h>
#include <kineto/libkineto.h>

namespace regiontrace::torch_profiler {

void init_kineto_on_this_thread() noexcept {
  try {
    if (libkineto::api().isProfilerRegistered()) return;
    // The arguments libtorch's prepareProfiler passes: device activity
    // (CUPTI) only where a device backend is there.
    const bool cpu_only = !(at::hasCUDA() || at::hasXPU() || at::hasMTIA() ||
                            c10::get_privateuse1_backend() != "privateuseone");
    libkineto_init(cpu_only, /*logOnError=*/true);
    libkineto::api().suppressLogMessages();
  } catch (...) {
    // libtorch's own start initialises Kineto then, as before.
  }
}

}  // namespace regiontrace::torch_profiler
