// The machine's name, as Kineto writes it into a trace's "host_name" and
// torch.profiler's tensorboard_trace_handler into a trace's file name.
#pragma once

#include <unistd.h>

#include <string>

namespace regiontrace::torch_profiler {

inline std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

}  // namespace regiontrace::torch_profiler
