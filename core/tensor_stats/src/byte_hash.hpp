// A 64-bit fingerprint of a byte string, computed in parallel over fixed
// 64 KiB blocks (so the result does not depend on the thread count). It
// answers "are these two tensors bitwise identical?", nothing more: it is not
// a cryptographic hash, and not compatible with any published one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace regiontrace::stats {

std::uint64_t hash_bytes(const void* data, std::size_t size);

}  // namespace regiontrace::stats
