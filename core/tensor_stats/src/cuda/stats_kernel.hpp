// The device half of the CUDA statistics, with plain types only: the .cu file
// that implements it includes no libtorch header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stats_kernels.hpp"
#include "stats_partial.hpp"

namespace regiontrace::stats {

// Blocks the first kernel uses for n elements of `kind` on the current
// device, and the device scratch memory cuda_stats needs for them.
int cuda_stats_blocks(ElementKind kind, std::int64_t n);
std::size_t cuda_stats_scratch_bytes(int blocks);

// Statistics of data[0, n) (device memory, n > 0) on `stream` (a
// cudaStream_t): per-block partials, one block combining them, one small copy
// to the host; waits for it. Returns nullptr or the CUDA error's text.
const char* cuda_stats(ElementKind kind, const void* data, std::int64_t n, void* scratch,
                       int blocks, void* stream, Partial* host_out);

}  // namespace regiontrace::stats
