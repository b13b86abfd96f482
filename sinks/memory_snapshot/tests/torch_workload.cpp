#include "torch_workload.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <condition_variable>
#include <mutex>

namespace regiontrace::memory::test {

struct Buffer::Impl {
  at::Tensor tensor;
};

Buffer::Buffer() = default;
Buffer::Buffer(std::int64_t bytes) : impl_(std::make_unique<Impl>()) {
  impl_->tensor = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
}
Buffer::~Buffer() = default;
Buffer::Buffer(Buffer&&) noexcept = default;
Buffer& Buffer::operator=(Buffer&&) noexcept = default;
void Buffer::reset() {
  impl_.reset();
}
bool Buffer::empty() const {
  return impl_ == nullptr;
}

void allocate_and_free(std::int64_t bytes) {
  Buffer b(bytes);
}

Buffer allocate_in_launch(std::int64_t bytes) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  Buffer out;
  at::launch([&] {
    Buffer b(bytes);
    std::lock_guard<std::mutex> lock(m);
    out = std::move(b);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return done; });
  return out;
}

bool torch_profiler_enabled() {
  return torch::profiler::impl::profilerEnabled();
}

namespace prof = torch::autograd::profiler;

void start_application_profiler(bool profile_memory) {
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO,
                                                     /*report_input_shapes=*/false, profile_memory);
  const std::set<torch::profiler::impl::ActivityType> activities{
      torch::profiler::impl::ActivityType::CPU};
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
}

std::size_t stop_application_profiler() {
  std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  return result ? result->events().size() : 0;
}

void start_legacy_profiler() {
  prof::enableProfilerLegacy(
      torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
}

void stop_legacy_profiler() {
  prof::disableProfilerLegacy();
}

namespace {

namespace impl = torch::profiler::impl;

class OtherProfilerState final : public impl::ProfilerStateBase {
 public:
  OtherProfilerState()
      : impl::ProfilerStateBase(
            impl::ProfilerConfig(impl::ProfilerState::KINETO, false, /*profile_memory=*/true)) {}
  // libtorch 1.13 passes the totals as int64_t, 2.x as size_t: take either.
  template <typename Total>
  void record(std::int64_t bytes, Total) {
    seen_bytes += bytes < 0 ? -bytes : bytes;
  }
  void reportMemoryUsage(void*, std::int64_t bytes, decltype(sizeof(int)) total,
                         decltype(sizeof(int)), c10::Device) {
    record(bytes, total);
  }
  void reportMemoryUsage(void*, std::int64_t bytes, std::int64_t total, std::int64_t, c10::Device) {
    record(bytes, total);
  }
  impl::ActiveProfilerType profilerType() override { return impl::ActiveProfilerType::KINETO; }
  std::int64_t seen_bytes = 0;
};

thread_local std::shared_ptr<OtherProfilerState> t_other_state;

}  // namespace

void push_profiler_state() {
  t_other_state = std::make_shared<OtherProfilerState>();
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, t_other_state);
}

std::int64_t pop_profiler_state() {
  c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  const std::int64_t seen = t_other_state->seen_bytes;
  t_other_state.reset();
  return seen;
}

}  // namespace regiontrace::memory::test
