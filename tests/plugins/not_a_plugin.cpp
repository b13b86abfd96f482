// A shared library that is not a sink, named like one.
#include "constructor_mark.hpp"

REGIONTRACE_TEST_CONSTRUCTOR_MARK("not_a_plugin")
extern "C" int some_unrelated_function() {
  return 42;
}
