// How libtorch's allocation events reach the memory sink, without the
// profiler.
//
// libtorch reports every allocation and free to the object in the
// thread-local debug-info slot PROFILER_STATE (c10::reportMemoryUsageToProfiler),
// when that object says memory profiling is on. The sink puts a reporter of
// its own there, once per thread, the first time the thread enters a selected
// region, and leaves it there: frees outside regions must be seen too.
//
// The torch profiler uses the same slot and static_casts whatever sits there
// to its own state type. So (1) our reporter IS a profiler state
// (torch::profiler::impl::ProfilerStateBase, configured "disabled", type
// NONE): `profilerEnabled()`, `enableProfiler()`' own checks and the like
// read a valid object that says "no profiler here"; (2) it is never pushed
// above another profiler state: when one holds the slot, the sink stands
// aside on that thread (events go to the profiler) and says so; (3) it is
// never popped from under someone else: a profiler that starts later pushes
// its state on top, and pops it when it stops, and ours is active again.
// libtorch's own Kineto enableProfiler() refuses to start on a thread whose
// slot holds anything, so while the sink runs, a thread that entered a
// selected region cannot start it (the legacy profiler and the torch_profiler
// sink, which push their state themselves, can). Once the sink is closed the
// reporter takes itself out of the slot at the thread's next allocation.
//
// Which threads are heard: a thread from its first selected region on, and
// the workers libtorch hands that thread's state to (at::launch inter-op
// tasks and the autograd engine's device threads propagate ThreadLocalState;
// events there are attributed to the handing thread's region). Intra-op
// workers (at::parallel_for under OpenMP, as in Debian's libtorch 1.13) get no
// thread-local state: their allocations and frees are not seen.
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::memory {

class ThreadAccounting;

class AllocationListener {
 public:
  virtual ~AllocationListener() = default;
  // Any thread. bytes > 0: an allocation; < 0: a free. device_total: the
  // figure libtorch passes along (cuda: the caching allocator's allocated
  // bytes on that device). `owner`: whose region it counts for, or nullptr.
  virtual void on_allocation(ThreadAccounting* owner, std::uintptr_t address, std::int64_t bytes,
                             std::int64_t device_total, int device) = 0;
  // An allocation of `bytes` failed (libtorch's OOM report, or the CUDA OOM
  // observer). Called with allocator locks possibly held: record, do not act.
  virtual void on_out_of_memory(int device, std::int64_t bytes) = 0;
};

// Where every installed reporter sends events; nullptr silences them all
// (they then tell libtorch that memory profiling is off, which costs
// libtorch nothing). `generation` identifies the sink instance: reporters
// made for an older one still count, but attribute nothing.
void set_listener(AllocationListener* listener, std::uint64_t generation);
void notify_out_of_memory(int device, std::int64_t bytes);

enum class SlotState {
  kOurs,      // this thread reports to `acc`
  kOccupied,  // a profiler (or someone else) holds the slot: we stand aside
};
// Owner thread of `acc`: makes this thread report to acc's reporter, unless
// the slot is held by someone else.
SlotState claim_slot(ThreadAccounting& acc);
// Owner thread: whether events on this thread currently reach `acc`.
bool slot_is_ours(const ThreadAccounting& acc);
// Calling thread: who holds the slot when it is not ours, in words for the
// summary ("the torch profiler (Kineto)").
std::string slot_holder();

}  // namespace regiontrace::memory
