// Test plugins that a host must refuse without loading carry this: when
// REGIONTRACE_TEST_CONSTRUCTOR_MARK names a file, loading the plugin appends
// a line to it, which the tests expect never to see.
#pragma once

#include <cstdio>
#include <cstdlib>

#define REGIONTRACE_TEST_CONSTRUCTOR_MARK(label)                                \
  __attribute__((constructor)) static void regiontrace_test_constructor_ran() { \
    if (const char* path = std::getenv("REGIONTRACE_TEST_CONSTRUCTOR_MARK")) {  \
      if (std::FILE* f = std::fopen(path, "a")) {                               \
        std::fputs(label " was loaded\n", f);                                   \
        std::fclose(f);                                                         \
      }                                                                         \
    }                                                                           \
  }
