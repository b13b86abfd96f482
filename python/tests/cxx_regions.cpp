// C++ code loaded into a Python process (with ctypes, as a torch extension
// would be loaded with import): it links libregiontrace and uses only the
// public API, so whatever it sees is what Python's `regiontrace` set up.
#include <cstdint>

#include "regiontrace/regiontrace.hpp"

extern "C" {

// Opens a C++ region, calls back into Python inside it, closes it.
__attribute__((visibility("default"))) void rt_test_cxx_region(const char* name, void (*inside)()) {
  const regiontrace::Region region{std::string_view(name)};
  if (inside != nullptr) inside();
}

__attribute__((visibility("default"))) std::int64_t rt_test_cxx_step() {
  return regiontrace::step();
}

__attribute__((visibility("default"))) void rt_test_cxx_set_step(std::int64_t step) {
  regiontrace::set_step(step);
}

__attribute__((visibility("default"))) int rt_test_cxx_enabled() {
  return regiontrace::enabled() ? 1 : 0;
}
}
