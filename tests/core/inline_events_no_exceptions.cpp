// Regions in a translation unit built with -fno-exceptions (see
// inline_events_test.cpp): the header's inline event path, which catches
// what a sink throws, is off here and such regions go out of line.
#include "regiontrace/regiontrace.hpp"

namespace regiontrace::test {

bool inline_events_in_no_exceptions_unit() {
  return REGIONTRACE_INLINE_EVENTS != 0;
}

void regions_built_without_exceptions() {
  RT_REGION("nx.outer");
  RT_REGION("nx.inner");
}

}  // namespace regiontrace::test
