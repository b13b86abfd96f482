// All statistics in one fused reduction on the device. What each thread
// does (16-byte vector loads, several in flight, sums in double, min and max
// in float, integer counts) is in stats_vector_math.hpp, shared with a host
// emulation test; here are the launch, the block reduction in shared memory,
// and a one-block kernel that combines the blocks in index order
// (deterministic) and writes one Partial, copied to the host.
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/stats_kernel.hpp"
#include "cuda/stats_vector_math.hpp"

namespace regiontrace::stats {
namespace {

using gpu::kThreads;
using gpu::Sums;

// The tree every block (and the combining block) reduces in. The host
// emulation adds in this order too.
__device__ void block_reduce(const Sums& mine, Sums* shared) {
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) gpu::add(shared[threadIdx.x], shared[threadIdx.x + stride]);
    __syncthreads();
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    partial_kernel(const T* data, std::int64_t n, Sums* out) {
  __shared__ Sums shared[kThreads];
  const double shift = gpu::shift_for(data);
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * kThreads;
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  block_reduce(gpu::widen_sums(gpu::accumulate_thread(data, n, shift, thread, threads)), shared);
  if (threadIdx.x == 0) out[blockIdx.x] = shared[0];
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const T* data, std::int64_t n, const Sums* partials, int blocks, Partial* out) {
  __shared__ Sums shared[kThreads];
  Sums mine = gpu::empty_sums();
  // Fixed assignment of blocks to threads: the same order every run.
  for (int b = threadIdx.x; b < blocks; b += kThreads) gpu::add(mine, partials[b]);
  block_reduce(mine, shared);
  if (threadIdx.x == 0) *out = gpu::finish_sums(shared[0], n, gpu::shift_for(data));
}

// Blocks of partial_kernel<T> resident at once on the current device: the
// grid never needs more (each thread loops), and a grid of exactly one wave
// has no half-empty last wave. Cached per device; the summation order
// depends on it, so results are identical run to run on one GPU model.
template <typename T>
int resident_blocks() {
  constexpr int kDevices = 64;
  static int cached[kDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kDevices) return 1024;
  if (cached[device] != 0) return cached[device];
  int sms = 0, per_sm = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, partial_kernel<T>, kThreads, 0) !=
          cudaSuccess ||
      sms * per_sm <= 0) {
    cudaGetLastError();  // not sticky: leave no error for the launch to report
    return 1024;
  }
  cached[device] = sms * per_sm;
  return cached[device];
}

template <typename T>
int blocks_for(std::int64_t n) {
  // Enough blocks for kUnroll vectors per thread, at most one full wave.
  const std::int64_t per_block =
      static_cast<std::int64_t>(kThreads) * gpu::kUnroll * (gpu::kVectorBytes / sizeof(T));
  const std::int64_t wanted = (n + per_block - 1) / per_block;
  const std::int64_t most = resident_blocks<T>();
  return static_cast<int>(wanted < 1 ? 1 : (wanted > most ? most : wanted));
}

template <typename T>
const char* run(const void* data, std::int64_t n, void* scratch, int blocks, cudaStream_t stream,
                Partial* host_out) {
  const T* p = static_cast<const T*>(data);
  Sums* partials = static_cast<Sums*>(scratch);
  Partial* result = reinterpret_cast<Partial*>(partials + blocks);
  partial_kernel<T><<<blocks, kThreads, 0, stream>>>(p, n, partials);
  combine_kernel<T><<<1, kThreads, 0, stream>>>(p, n, partials, blocks, result);
  cudaError_t err =
      cudaMemcpyAsync(host_out, result, sizeof(Partial), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

// Calls fn with a null pointer of the element type that `kind` is read as.
template <typename Fn>
auto with_type(ElementKind kind, Fn&& fn) {
  switch (kind) {
    case ElementKind::kF64:
      return fn(static_cast<const double*>(nullptr));
    case ElementKind::kF32:
      return fn(static_cast<const float*>(nullptr));
    case ElementKind::kF16:
      return fn(static_cast<const gpu::F16*>(nullptr));
    case ElementKind::kBF16:
      return fn(static_cast<const gpu::Bf16*>(nullptr));
    case ElementKind::kU8:
      return fn(static_cast<const std::uint8_t*>(nullptr));
    case ElementKind::kI8:
      return fn(static_cast<const std::int8_t*>(nullptr));
    case ElementKind::kI16:
      return fn(static_cast<const std::int16_t*>(nullptr));
    case ElementKind::kI32:
      return fn(static_cast<const std::int32_t*>(nullptr));
    case ElementKind::kI64:
      break;
  }
  return fn(static_cast<const std::int64_t*>(nullptr));
}

}  // namespace

int cuda_stats_blocks(ElementKind kind, std::int64_t n) {
  return with_type(kind, [n](auto* type) {
    return blocks_for<std::remove_const_t<std::remove_pointer_t<decltype(type)>>>(n);
  });
}

std::size_t cuda_stats_scratch_bytes(int blocks) {
  return sizeof(Sums) * static_cast<std::size_t>(blocks) + sizeof(Partial);
}

const char* cuda_stats(ElementKind kind, const void* data, std::int64_t n, void* scratch,
                       int blocks, void* stream_ptr, Partial* host_out) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  return with_type(kind, [&](auto* type) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(type)>>;
    return run<T>(data, n, scratch, blocks, stream, host_out);
  });
}

}  // namespace regiontrace::stats
