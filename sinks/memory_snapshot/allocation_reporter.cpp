// The only translation unit of the sink that includes libtorch headers (the
// CUDA helpers aside). See allocation_reporter.hpp for the rules it follows.
#include "allocation_reporter.hpp"

#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <pthread.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <memory>

#include "memory_devices.hpp"
#include "thread_accounting.hpp"

// libtorch 1.13 passes totals as int64_t, 2.x as size_t (chosen by CMake).
#if REGIONTRACE_MEMORY_REPORT_SIZE_T
using TotalBytes = std::size_t;
#else
using TotalBytes = std::int64_t;
#endif

namespace regiontrace::memory {
namespace {

namespace prof = torch::profiler::impl;

std::atomic<AllocationListener*> g_listener{nullptr};
std::atomic<std::uint64_t> g_generation{0};

int device_index(const c10::Device& device) {
  if (device.is_cpu()) return kCpuDevice;
  if (device.is_cuda() && device.index() >= 0 && device.index() < kMaxCudaDevices) {
    return cuda_device(device.index());
  }
  return -1;  // other device types are not accounted for
}

class AllocationReporter final : public prof::ProfilerStateBase,
                                 public std::enable_shared_from_this<AllocationReporter> {
 public:
  explicit AllocationReporter(ThreadAccounting* owner)
      : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)),
        owner_(owner) {}

  void reportMemoryUsage(void* ptr, std::int64_t bytes, TotalBytes total_allocated,
                         TotalBytes /*total_reserved*/, c10::Device device) override {
    AllocationListener* l = g_listener.load(std::memory_order_acquire);
    if (l == nullptr) return;
    const int d = device_index(device);
    if (d < 0) return;
    ThreadAccounting* owner =
        owner_->generation == g_generation.load(std::memory_order_relaxed) ? owner_ : nullptr;
    l->on_allocation(owner, reinterpret_cast<std::uintptr_t>(ptr), bytes,
                     static_cast<std::int64_t>(total_allocated), d);
  }

#if REGIONTRACE_MEMORY_HAS_OOM_REPORT
  void reportOutOfMemory(std::int64_t bytes, TotalBytes /*total_allocated*/,
                         TotalBytes /*total_reserved*/, c10::Device device) override {
    const int d = device_index(device);
    if (d >= 0) notify_out_of_memory(d, bytes);
  }
#endif

  // libtorch asks before every report. While no sink listens it skips all
  // reporting work, and the reporter takes itself out of the slot: libtorch
  // lets a profiler start on a thread only while the slot is empty.
  bool memoryProfilingEnabled() const override {
    if (g_listener.load(std::memory_order_relaxed) != nullptr) return true;
    const_cast<AllocationReporter*>(this)->leave_slot();
    return false;
  }

  prof::ActiveProfilerType profilerType() override {
    return prof::ActiveProfilerType::NONE;
  }

  bool stale() const {
    return owner_->generation != g_generation.load(std::memory_order_relaxed);
  }

 private:
  void leave_slot() {
    using c10::DebugInfoKind;
    using c10::ThreadLocalDebugInfo;
    if (gave_up_leaving_.load(std::memory_order_relaxed)) return;
    const c10::DebugInfoBase* self = this;
    if (ThreadLocalDebugInfo::get(DebugInfoKind::PROFILER_STATE) != self) return;
    // Popping drops the slot's reference: stay alive until we return.
    const std::shared_ptr<AllocationReporter> keep = shared_from_this();
    try {
      if (ThreadLocalDebugInfo::_peek(DebugInfoKind::PROFILER_STATE).get() == self) {
        ThreadLocalDebugInfo::_pop(DebugInfoKind::PROFILER_STATE);
      }
    } catch (const c10::Error&) {
      // Other debug info was pushed above ours (it restores the chain when it
      // goes): not ours to take apart. Do not try (and throw) again.
      gave_up_leaving_.store(true, std::memory_order_relaxed);
    }
  }

  ThreadAccounting* const owner_;  // owned by a sink, which is never deleted
  std::atomic<bool> gave_up_leaving_{false};
};

void forget_listener_in_child() {
  // The forked child must not report into its parent's sink (whose locks may
  // be held by threads that did not survive the fork).
  g_listener.store(nullptr);
}

}  // namespace

void set_listener(AllocationListener* listener, std::uint64_t generation) {
  static const bool atfork = [] {
    pthread_atfork(nullptr, nullptr, &forget_listener_in_child);
    return true;
  }();
  (void)atfork;
  if (listener != nullptr) g_generation.store(generation);
  g_listener.store(listener, std::memory_order_release);
}

void notify_out_of_memory(int device, std::int64_t bytes) {
  AllocationListener* l = g_listener.load(std::memory_order_acquire);
  if (l != nullptr) l->on_out_of_memory(device, bytes);
}

SlotState claim_slot(ThreadAccounting& acc) {
  using c10::DebugInfoKind;
  using c10::ThreadLocalDebugInfo;
  c10::DebugInfoBase* top = ThreadLocalDebugInfo::get(DebugInfoKind::PROFILER_STATE);
  if (top != nullptr && top == acc.reporter_id) return SlotState::kOurs;
  auto* ours = dynamic_cast<AllocationReporter*>(top);
  if (top != nullptr && ours == nullptr) return SlotState::kOccupied;
  if (ours != nullptr && ours->stale()) {
    // Left by an earlier sink instance on this thread: take it off if it is
    // the newest entry (it usually is), so entries do not pile up.
    try {
      if (ThreadLocalDebugInfo::_peek(DebugInfoKind::PROFILER_STATE).get() == top) {
        ThreadLocalDebugInfo::_pop(DebugInfoKind::PROFILER_STATE);
      }
    } catch (const c10::Error&) {
      // Another kind of entry is newer: leave it, push on top.
    }
  }
  if (!acc.reporter) {
    auto reporter = std::make_shared<AllocationReporter>(&acc);
    acc.reporter_id = static_cast<c10::DebugInfoBase*>(reporter.get());
    acc.reporter = reporter;
  }
  ThreadLocalDebugInfo::_push(DebugInfoKind::PROFILER_STATE,
                              std::static_pointer_cast<AllocationReporter>(acc.reporter));
  return SlotState::kOurs;
}

bool slot_is_ours(const ThreadAccounting& acc) {
  return acc.reporter_id != nullptr &&
         c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) == acc.reporter_id;
}

}  // namespace regiontrace::memory

namespace regiontrace::memory {

std::string slot_holder() {
  auto* state = dynamic_cast<prof::ProfilerStateBase*>(
      c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE));
  if (state == nullptr) return "another user of libtorch's profiler slot";
  switch (state->profilerType()) {
    case prof::ActiveProfilerType::KINETO:
      return "the torch profiler (Kineto)";
    case prof::ActiveProfilerType::LEGACY:
      return "the legacy autograd profiler";
    case prof::ActiveProfilerType::NVTX:
      return "the autograd NVTX profiler";
    default:
      return "another profiler";
  }
}

}  // namespace regiontrace::memory
