// The gate's calls into libtorch's profiler that are under way, on every
// thread, so that a session is finished only once no thread still writes
// into its events; and the ops the profiler started and has not ended, per
// gate slot (session_slots.hpp), so that a slot is reused only once every
// op that will end through it has.
//
// The gate counts each call (an op's start and its end; a 32x32 matmul makes
// four aten calls). One shared counter made that four locked
// read-modify-writes per aten call, which with libtorch's id counter kept an
// op at 1.06x-1.10x the bare profiler (bench/README.md). So each thread
// counts in a mark of its own, with plain stores, and the thread that
// finishes a session, once per window, pays for the ordering: membarrier(2)
// makes every running thread of the process pass a full memory barrier,
// after which either a thread's count is seen, or that thread sees the gate
// closed (the classic asymmetric Dekker pairing). Where the kernel refuses
// membarrier, each call fences itself instead.
#pragma once

#include <atomic>
#include <cstdint>

namespace regiontrace::torch_profiler {

// The gate function pairs whose open ops are counted.
constexpr int kCountedSlots = 4;

// A cache line of its own: threads never write into a line another reads.
// Written by its thread only.
struct alignas(64) CallMark {
  std::atomic<std::uint32_t> depth{0};
  // Ops started minus ops ended on this thread, per slot: an op may end on
  // another thread than it started on, so only the sum over threads counts.
  std::atomic<std::int32_t> open[kCountedSlots] = {};
};

namespace calls_detail {
// Initial-exec: in a plugin loaded with dlopen a thread_local is otherwise
// reached through a call to __tls_get_addr at every access (eight per
// aten call here). glibc keeps spare static TLS for such libraries.
inline thread_local CallMark* t_mark __attribute__((tls_model("initial-exec"))) = nullptr;
// Set when membarrier is unavailable: each call then fences itself.
inline std::atomic<bool> g_self_fenced{true};
CallMark* register_this_thread();
}  // namespace calls_detail

// One call into the profiler, counted from construction to destruction.
class CallUnderWay {
 public:
  // Counts the call, then asks `open()` whether the gate still takes it.
  // When it does, the call stays counted until destruction, and a
  // wait_for_calls_under_way() that began after the gate closed waits for
  // it; when it does not, the call is not counted.
  template <typename Open>
  explicit CallUnderWay(Open&& open) {
    mark_ = calls_detail::t_mark;
    if (mark_ == nullptr) mark_ = calls_detail::register_this_thread();
    mark_->depth.store(mark_->depth.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // The count must be visible before open() reads the gate. membarrier in
    // wait_for_calls_under_way() supplies the processor's side; this keeps
    // the compiler from moving the read up.
    if (calls_detail::g_self_fenced.load(std::memory_order_relaxed)) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    entered_ = open();
    if (!entered_) leave();
  }
  ~CallUnderWay() {
    if (entered_) leave();
  }
  CallUnderWay(const CallUnderWay&) = delete;
  CallUnderWay& operator=(const CallUnderWay&) = delete;

  bool entered() const { return entered_; }

  // An op the profiler started through `slot`, and one that ended.
  void op_opened(int slot) const { add(mark_->open[slot], 1); }
  void op_closed(int slot) const { add(mark_->open[slot], -1); }

 private:
  static void add(std::atomic<std::int32_t>& n, std::int32_t by) {
    n.store(n.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  // Release: what the call wrote is visible to the thread that sees it left.
  void leave() {
    mark_->depth.store(mark_->depth.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  CallMark* mark_ = nullptr;
  bool entered_ = false;
};

// Chooses how calls are ordered against wait_for_calls_under_way(): with
// membarrier where the kernel offers it, else by a fence in each call. Call
// it while no call can be under way (before a session goes live); it is
// cheap after the first time in a process.
void prepare_calls_under_way();

// Waits until every call that entered before the caller closed the gate has
// left. The caller closes the gate (the store the calls' open() reads)
// before calling this; calls that enter later see it closed.
void wait_for_calls_under_way();

// The ops started through `slot` that have not ended, on every thread; at
// least that many while no session can start ops through the slot (a count
// read while an op ends may be one too high, never too low).
std::int64_t ops_open(int slot);

// In a child forked from a process with calls under way: those were on the
// parent's other threads, which the child does not have, as are the ops
// they had open.
void forget_calls_in_child();

}  // namespace regiontrace::torch_profiler
