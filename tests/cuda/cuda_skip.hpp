// The CUDA tests run in every build and skip, with the reason, where they
// cannot run: a libtorch without CUDA (Debian's) or a machine without a GPU.
#pragma once

#include <ATen/Context.h>
#include <gtest/gtest.h>

#define REGIONTRACE_REQUIRE_CUDA()                                                     \
  do {                                                                                 \
    if (!at::hasCUDA())                                                                \
      GTEST_SKIP() << "needs a GPU: this libtorch has no CUDA or sees no CUDA device"; \
  } while (0)
