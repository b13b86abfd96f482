// libtorch, seen from the memory sink's tests through a narrow window: only
// torch_workload.cpp includes libtorch headers (each such file costs about a
// minute to compile here).
#pragma once

#include <cstdint>
#include <memory>

namespace regiontrace::memory::test {

// A CPU tensor of exactly `bytes` bytes (uint8), kept until reset or
// destruction: one allocation event of `bytes`, one free of `bytes`.
class Buffer {
 public:
  Buffer();
  explicit Buffer(std::int64_t bytes);
  ~Buffer();
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  void reset();
  bool empty() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Allocates and frees at once.
void allocate_and_free(std::int64_t bytes);
// Allocates `bytes` in an at::launch task (an inter-op worker thread, which
// inherits this thread's thread-local state) and waits for it.
Buffer allocate_in_launch(std::int64_t bytes);

// libtorch's own view: whether a profiler is enabled on this thread.
bool torch_profiler_enabled();
// The application's own profiler, started and stopped on this thread
// (libtorch's Kineto-style API; CPU activity only). Returns the number of
// events the profiler collected.
void start_application_profiler(bool profile_memory);
std::size_t stop_application_profiler();
// The legacy autograd profiler.
void start_legacy_profiler();
void stop_legacy_profiler();
// A profiler state of another tool (type KINETO, memory profiling on) pushed
// into this thread's PROFILER_STATE slot directly, as the torch_profiler sink
// does; pop returns the bytes of the allocation and free events it received.
void push_profiler_state();
std::int64_t pop_profiler_state();

}  // namespace regiontrace::memory::test
