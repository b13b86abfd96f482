// All statistics in one fused reduction on the device. Every thread shifts
// by the tensor's first element (read by all, so partial sums simply add),
// accumulates in double over a grid-stride loop; blocks reduce in shared
// memory; a one-block kernel combines the blocks in index order
// (deterministic) and writes one Partial, copied to the host.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#include "cuda/stats_kernel.hpp"

namespace regiontrace::stats {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

__device__ inline double to_double(double v) {
  return v;
}
__device__ inline double to_double(float v) {
  return v;
}
__device__ inline double to_double(__half v) {
  return __half2float(v);
}
__device__ inline double to_double(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ inline double to_double(std::uint8_t v) {
  return v;
}
__device__ inline double to_double(std::int8_t v) {
  return v;
}
__device__ inline double to_double(std::int16_t v) {
  return v;
}
__device__ inline double to_double(std::int32_t v) {
  return v;
}
__device__ inline double to_double(std::int64_t v) {
  return static_cast<double>(v);
}

// What one thread, then one block, accumulates (shifted sums).
struct Sums {
  double s, q, a, lo, hi, zeros, nans, infs, n;
};

__device__ inline void add(Sums& x, const Sums& y) {
  x.s += y.s;
  x.q += y.q;
  x.a += y.a;
  x.lo = fmin(x.lo, y.lo);  // fmin/fmax skip NaN; NaN is applied from the count
  x.hi = fmax(x.hi, y.hi);
  x.zeros += y.zeros;
  x.nans += y.nans;
  x.infs += y.infs;
  x.n += y.n;
}

__device__ inline Sums empty_sums() {
  return Sums{0, 0, 0, CUDART_INF, -CUDART_INF, 0, 0, 0, 0};
}

__device__ inline double shift_of(double first) {
  return isfinite(first) ? first : 0.0;
}

__device__ void block_reduce(Sums& mine, Sums* shared) {
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) add(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
  mine = shared[0];
}

template <typename T>
__global__ void partial_kernel(const T* data, std::int64_t n, Sums* out) {
  __shared__ Sums shared[kThreads];
  const double shift = shift_of(to_double(data[0]));
  Sums mine = empty_sums();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double x = to_double(data[i]);
    const double d = x - shift;
    mine.s += d;
    mine.q += d * d;
    mine.a += fabs(x);
    mine.lo = fmin(mine.lo, x);
    mine.hi = fmax(mine.hi, x);
    mine.zeros += x == 0.0 ? 1.0 : 0.0;
    mine.nans += isnan(x) ? 1.0 : 0.0;
    mine.infs += isinf(x) ? 1.0 : 0.0;
    mine.n += 1.0;
  }
  block_reduce(mine, shared);
  if (threadIdx.x == 0) out[blockIdx.x] = mine;
}

template <typename T>
__global__ void combine_kernel(const T* data, const Sums* partials, int blocks, Partial* out) {
  __shared__ Sums shared[kThreads];
  Sums mine = empty_sums();
  // Fixed assignment of blocks to threads: the same order every run.
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) add(mine, partials[b]);
  block_reduce(mine, shared);
  if (threadIdx.x != 0) return;
  const double k = shift_of(to_double(data[0]));
  const double n = mine.n;
  Partial r;
  r.n = static_cast<std::int64_t>(n);
  r.sum = n * k + mine.s;
  r.mean = k + mine.s / n;
  r.m2 = fmax(mine.q - mine.s * (mine.s / n), 0.0);
  r.sumsq = mine.q + 2.0 * k * mine.s + n * k * k;
  r.abs_sum = mine.a;
  r.min = mine.lo;
  r.max = mine.hi;
  r.zeros = mine.zeros;
  r.nans = static_cast<std::int64_t>(mine.nans);
  r.infs = static_cast<std::int64_t>(mine.infs);
  // Σx² as torch gets it: NaN with any NaN, else +Inf with any Inf.
  if (mine.nans > 0) {
    r.sumsq = CUDART_NAN;
  } else if (mine.infs > 0) {
    r.sumsq = CUDART_INF;
  }
  *out = r;
}

template <typename T>
const char* run(const void* data, std::int64_t n, void* scratch, int blocks, cudaStream_t stream,
                Partial* host_out) {
  const T* p = static_cast<const T*>(data);
  Sums* partials = static_cast<Sums*>(scratch);
  Partial* result = reinterpret_cast<Partial*>(partials + blocks);
  partial_kernel<T><<<blocks, kThreads, 0, stream>>>(p, n, partials);
  combine_kernel<T><<<1, kThreads, 0, stream>>>(p, partials, blocks, result);
  cudaError_t err =
      cudaMemcpyAsync(host_out, result, sizeof(Partial), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

}  // namespace

int cuda_stats_blocks(std::int64_t n) {
  const std::int64_t wanted = (n + kThreads * 4 - 1) / (kThreads * 4);
  return static_cast<int>(wanted < 1 ? 1 : (wanted > kMaxBlocks ? kMaxBlocks : wanted));
}

std::size_t cuda_stats_scratch_bytes(int blocks) {
  return sizeof(Sums) * static_cast<std::size_t>(blocks) + sizeof(Partial);
}

const char* cuda_stats(ElementKind kind, const void* data, std::int64_t n, void* scratch,
                       int blocks, void* stream_ptr, Partial* host_out) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  switch (kind) {
    case ElementKind::kF64:
      return run<double>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kF32:
      return run<float>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kF16:
      return run<__half>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kBF16:
      return run<__nv_bfloat16>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kU8:
      return run<std::uint8_t>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kI8:
      return run<std::int8_t>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kI16:
      return run<std::int16_t>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kI32:
      return run<std::int32_t>(data, n, scratch, blocks, stream, host_out);
    case ElementKind::kI64:
      return run<std::int64_t>(data, n, scratch, blocks, stream, host_out);
  }
  return "unknown element kind";
}

}  // namespace regiontrace::stats
