#include "byte_hash.hpp"

#include <ATen/Parallel.h>

#include <cstring>
#include <vector>

namespace regiontrace::stats {
namespace {

constexpr std::size_t kBlock = 64 * 1024;
constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kP4 = 0x85EBCA77C2B2AE63ull;

inline std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}
inline std::uint64_t round(std::uint64_t acc, std::uint64_t word) {
  return rotl(acc + word * kP2, 31) * kP1;
}
inline std::uint64_t avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

// Four independent lanes over 32-byte stripes, then the tail word by word.
std::uint64_t hash_block(const unsigned char* p, std::size_t size, std::uint64_t index) {
  std::uint64_t v[4] = {kP1 + kP2 + index, kP2 + index, index, index - kP1};
  std::size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int lane = 0; lane < 4; ++lane) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * lane, 8);
      v[lane] = round(v[lane], w);
    }
  }
  std::uint64_t h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  h += size;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = rotl(h ^ round(0, w), 27) * kP1 + kP4;
  }
  if (i < size) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, size - i);
    h = rotl(h ^ round(0, w), 27) * kP1 + kP4;
  }
  return avalanche(h);
}

}  // namespace

std::uint64_t hash_bytes(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t blocks = (size + kBlock - 1) / kBlock;
  std::vector<std::uint64_t> block_hash(blocks);
  at::parallel_for(0, static_cast<std::int64_t>(blocks), 4, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
      const std::size_t len = std::min(kBlock, size - begin);
      block_hash[b] = hash_block(p + begin, len, static_cast<std::uint64_t>(b));
    }
  });
  std::uint64_t h = kP4 ^ size;
  for (std::uint64_t bh : block_hash) h = rotl(h ^ round(0, bh), 27) * kP1 + kP4;
  return avalanche(h);
}

}  // namespace regiontrace::stats
