// Loads whatever REGIONTRACE_SINKS names through an explicit init(), so a sink
// that cannot be loaded is reported here (exit 3) instead of wherever the
// first region happens to be, then walks two steps of nested regions.
#include <exception>
#include <iostream>

#include <regiontrace/regiontrace.hpp>

int main() {
  try {
    regiontrace::init();
  } catch (const std::exception& e) {
    std::cerr << "core_consumer: init failed: " << e.what() << "\n";
    return 3;
  }
  for (int step = 0; step < 2; ++step) {
    regiontrace::set_step(step);
    RT_REGION("consumer_step");
    RT_REGION("consumer_work");
    regiontrace::mark("consumer_mark");
  }
  regiontrace::snapshot("consumer_done");
  regiontrace::shutdown();
  return 0;
}
