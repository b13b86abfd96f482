// Devices the memory sink accounts for, as small indices: 0 is the CPU,
// 1 + N is cuda:N. Fixed-size arrays indexed this way keep the allocation
// hot path free of maps and locks.
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::memory {

inline constexpr int kCpuDevice = 0;
inline constexpr int kMaxCudaDevices = 16;
inline constexpr int kMaxDevices = 1 + kMaxCudaDevices;

inline constexpr int cuda_device(int cuda_index) {
  return 1 + cuda_index;
}
inline constexpr bool is_cuda(int device) {
  return device > kCpuDevice;
}
inline constexpr int cuda_index(int device) {
  return device - 1;
}

// "cpu", "cuda:0", ...: the keys of the `devices` objects in every output.
inline std::string device_name(int device) {
  return device == kCpuDevice ? std::string("cpu") : "cuda:" + std::to_string(cuda_index(device));
}

// Calls fn(device) for every bit set in a device mask, lowest first.
template <typename Fn>
void for_each_device(std::uint32_t mask, Fn&& fn) {
  while (mask != 0) {
    const int d = __builtin_ctz(mask);
    mask &= mask - 1;
    fn(d);
  }
}

}  // namespace regiontrace::memory
