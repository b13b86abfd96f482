// The one-pass loops over a contiguous run of elements, one per element
// type. Multi-versioned on x86-64 (baseline, AVX2, and AVX-512 for fp32 and
// bf16): the widest the CPU runs is picked.
#pragma once

#include <cstdint>

#include "stats_partial.hpp"

namespace regiontrace::stats {

enum class ElementKind : std::uint8_t {
  kF64,
  kF32,
  kF16,
  kBF16,
  kU8,  // also bool: stored as one byte, 0 or 1
  kI8,
  kI16,
  kI32,
  kI64,
};

// Bytes per element of `kind`.
int element_size(ElementKind kind);

// Statistics of data[0, n) (n > 0), written to *out.
void scan_contiguous(ElementKind kind, const void* data, std::int64_t n, Partial* out);

}  // namespace regiontrace::stats
