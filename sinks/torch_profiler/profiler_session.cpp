#include "profiler_session.hpp"

#include <ATen/Context.h>
#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "calls_under_way.hpp"
#include "collected_profile.hpp"
#include "kineto_first_init.hpp"

namespace regiontrace::torch_profiler {
namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;
using torch::profiler::impl::ProfilerStateBase;
// A class with static members in later 2.x, an enum before: not constexpr.
const c10::DebugInfoKind kProfilerSlot = c10::DebugInfoKind::PROFILER_STATE;

// A profiler running for the whole process (profile_all_threads,
// enableProfilerInChildThread's parent), whoever started it.
bool global_profiler_running() {
#if defined(REGIONTRACE_TP_STATE_GET_GLOBAL)
  return ProfilerStateBase::getGlobal() != nullptr;
#else
  return ProfilerStateBase::get(/*global=*/true) != nullptr;
#endif
}

// A profiler the application started, on any thread, while none of ours
// runs. libtorch 2.x keeps the last one started with CPU activity for the
// threads that join it (enableProfilerInChildThread, profile_all_threads)
// and Kineto traces one session per process: starting ours would take both
// from the application's.
bool application_profiler_started() {
#if defined(REGIONTRACE_TP_MAIN_THREAD_STATE)
  if (prof::isProfilerEnabledInMainThread()) return true;
#endif
  return global_profiler_running();
}

// --- the gate in front of the profiler's callback --------------------------
// One session is live at a time (one profiler per process), so these are
// process-wide. The profiler's own callbacks are the same functions for
// every session; they are atomics only because an op still running on
// another thread may read them while a new session starts.
std::atomic<const c10::DebugInfoBase*> g_live{nullptr};
std::atomic<at::RecordFunctionCallback::StartCallback> g_real_start{nullptr};
std::atomic<at::RecordFunctionCallback::EndCallback> g_real_end{nullptr};
std::atomic<bool> g_limited{false};
std::atomic<std::int64_t> g_budget{0};
std::atomic<std::int64_t> g_refused{0};
// When the budget ran out (CLOCK_MONOTONIC ns, the clock of region events):
// the moment collection stopped, which the trace's markers show.
std::atomic<std::int64_t> g_exhausted_at{0};

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void note_exhausted() {
  std::int64_t none = 0;
  if (g_exhausted_at.load(std::memory_order_relaxed) == 0) {
    g_exhausted_at.compare_exchange_strong(none, monotonic_ns());
  }
}
// The gate's registration, and one a forked child inherited from its parent.
std::atomic<at::CallbackHandle> g_gate{0};
std::atomic<at::CallbackHandle> g_inherited_gate{0};

// --- the gate switched off between collection windows ----------------------
// A registered callback costs every op in the process a RecordFunction
// (~250 ns, as much as a 32x32 matmul) even where the gate refuses it. So
// when no thread is attached and kRefusalsToSwitchOff ops in a row were
// refused, the gate is disabled in libtorch's table (ops then cost nothing),
// and the next attach enables it again: libtorch rebuilds each thread's
// callback list once then (~1-2 us), once per stretch outside the windows,
// not per region: regions entered back to back never reach the count.
constexpr std::int64_t kRefusalsToSwitchOff = 256;
std::atomic<int> g_attached{0};  // threads attached to the live session
std::atomic<std::int64_t> g_refusals{0};
std::atomic<bool> g_gate_on{true};
std::mutex g_gate_switch_mutex;

// Off only while no thread is attached. An attach increments g_attached,
// then reads g_gate_on; switching off writes g_gate_on, then reads
// g_attached again (all sequentially consistent): either the attaching
// thread sees "off" and switches the gate back on, or this sees it attached
// and leaves the gate on. Never off under an attached thread.
void switch_gate_off() {
  std::lock_guard<std::mutex> lock(g_gate_switch_mutex);
  const at::CallbackHandle gate = g_gate.load();
  if (gate == 0 || !g_gate_on.load() || g_attached.load() != 0) return;
  g_gate_on.store(false);
  if (g_attached.load() != 0) {
    g_gate_on.store(true);
    return;
  }
  at::disableCallback(gate);
  g_refusals.store(0);
}

void switch_gate_on() {
  std::lock_guard<std::mutex> lock(g_gate_switch_mutex);
  const at::CallbackHandle gate = g_gate.load();
  if (gate == 0 || g_gate_on.load()) return;
  at::reenableCallback(gate);
  g_refusals.store(0);
  g_gate_on.store(true);
}

void note_refused_outside() {
  if (g_attached.load(std::memory_order_relaxed) != 0) return;
  if (g_refusals.fetch_add(1, std::memory_order_relaxed) + 1 == kRefusalsToSwitchOff) {
    switch_gate_off();
  }
}

// Set in a child forked while a session was live: libtorch's Kineto keeps
// that session's state (and a handler thread the child does not have), so
// starting or stopping a profiler there ends the child in std::terminate.
std::atomic<bool> g_forked_from_live_session{false};

// A session stopped recording but libtorch's profiler still runs until
// collect(): the next session waits for that (one profiler per process).
std::atomic<bool> g_uncollected{false};
std::mutex g_collect_mutex;
std::condition_variable g_collected;

void wait_until_collected() {
  std::unique_lock<std::mutex> lock(g_collect_mutex);
  g_collected.wait(lock, [] { return !g_uncollected.load(); });
}

void note_collected() {
  {
    std::lock_guard<std::mutex> lock(g_collect_mutex);
    g_uncollected.store(false);
  }
  g_collected.notify_all();
}

// A forked child (a DataLoader-style worker) must not record into the
// parent's session, which it never writes: the gate closes at once. Its
// registration is removed when the child starts a session of its own, not
// here, where a lock another thread of the parent held may never be released.
void close_gate_in_child() {
  if (g_live.load() != nullptr || g_uncollected.load()) g_forked_from_live_session.store(true);
  g_live.store(nullptr);
  forget_calls_in_child();
  g_inherited_gate.store(g_gate.exchange(0));
  // Another thread of the parent may have held it at the fork: the child
  // has only this thread, and a fresh mutex.
  new (&g_gate_switch_mutex) std::mutex();
}

// --- which session an op belongs to ----------------------------------------
// An op that begins in one session and ends in the next must reach neither
// session's end callback: its context points into the events of the first,
// freed by then. libtorch copies the callbacks' function pointers into each
// RecordFunction when it is made, so the gate comes as kSlots pairs of
// functions, one pair registered per session: an op ends through the pair it
// began with, and a pair tells its session by its slot. A session takes a
// slot no open op began through (calls_under_way.hpp counts them), so a
// slot names one session for as long as any of its ops can end.
//
// With every counted slot held by an op still open (scopes left open across
// four collection windows), a session takes kTaggedSlot, which tells its ops
// by RecordFunction handle instead: libtorch numbers every RecordFunction in
// the order it is made when a callback asks for ids, and the session
// remembers the first number drawn after it went live. Asking for ids costs
// every RecordFunction a locked increment in libtorch (Kineto's own
// callback does not ask), hence the counted slots first.
constexpr int kSlots = kCountedSlots;
constexpr int kTaggedSlot = kSlots;
std::atomic<int> g_live_slot{-1};
// Ends not handed to the profiler because their op's session had finished.
std::atomic<std::int64_t> g_late_ends{0};
std::atomic<std::uint64_t> g_first_handle{0};  // the tagged slot's session

// A handle drawn now: every op made later gets a higher one.
std::uint64_t draw_handle() {
  at::StepCallbacks ids;
  ids.needs_ids_ = true;
  const at::RecordFunction probe(std::move(ids));  // no callbacks: nothing runs
  return probe.handle();
}

// Whether the live session is the one `Slot` names, for an op made with
// `handle`. Read in a call counted by CallUnderWay.
template <int Slot>
bool slot_is_live(std::uint64_t handle) {
  if (g_live.load(std::memory_order_acquire) == nullptr) return false;
  if (g_live_slot.load(std::memory_order_relaxed) != Slot) return false;
  if constexpr (Slot == kTaggedSlot) {
    return handle >= g_first_handle.load(std::memory_order_relaxed);
  } else {
    return true;
  }
}

template <int Slot>
std::uint64_t handle_of(const at::RecordFunction& fn) {
  if constexpr (Slot == kTaggedSlot) {
    return fn.handle();
  } else {
    return 0;
  }
}

template <int Slot>
std::unique_ptr<at::ObserverContext> gated_start(const at::RecordFunction& fn) {
  const c10::DebugInfoBase* live = g_live.load(std::memory_order_acquire);
  // A thread records while it carries the live session's state: attached,
  // or inheriting the state of an attached thread.
  if (live == nullptr || c10::ThreadLocalDebugInfo::get(kProfilerSlot) != live) {
    note_refused_outside();
    return nullptr;
  }
  if (g_refusals.load(std::memory_order_relaxed) != 0) {
    g_refusals.store(0, std::memory_order_relaxed);  // "in a row"
  }
  // Counted while it runs: finish() closes the gate, then waits for the
  // calls under way (they never span application code) before libtorch
  // reads and frees the events, which this call appends to. An op made
  // before the session went live may carry an earlier session's pair.
  const std::uint64_t handle = handle_of<Slot>(fn);
  const CallUnderWay call([live, handle] {
    return g_live.load(std::memory_order_acquire) == live && slot_is_live<Slot>(handle);
  });
  if (!call.entered()) return nullptr;
  if (g_limited.load(std::memory_order_relaxed) &&
      g_budget.fetch_sub(1, std::memory_order_relaxed) <= 0) {
    if (g_refused.fetch_add(1, std::memory_order_relaxed) == 0) note_exhausted();
    return nullptr;
  }
  std::unique_ptr<at::ObserverContext> ctx = g_real_start.load(std::memory_order_relaxed)(fn);
  if constexpr (Slot != kTaggedSlot) {
    if (ctx != nullptr) call.op_opened(Slot);
  }
  return ctx;
}

template <int Slot>
void gated_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  if (ctx == nullptr) return;  // the profiler did not start it
  // An op that ends after its session finished (on another thread, or a
  // scope left after the window closed) is not handed to the profiler,
  // whose events are gone by then.
  const std::uint64_t handle = handle_of<Slot>(fn);
  const CallUnderWay call([handle] { return slot_is_live<Slot>(handle); });
  if (call.entered()) {
    g_real_end.load(std::memory_order_relaxed)(fn, ctx);
  } else {
    g_late_ends.fetch_add(1, std::memory_order_relaxed);
  }
  // After the end callback: the slot is free once every op begun through it
  // has left the profiler.
  if constexpr (Slot != kTaggedSlot) call.op_closed(Slot);
}

// The slot for a session starting now; while no session is live.
int free_slot() {
  for (int slot = 0; slot < kSlots; ++slot) {
    if (ops_open(slot) <= 0) return slot;
  }
  return kTaggedSlot;
}

struct GatePair {
  at::RecordFunctionCallback::StartCallback start;
  at::RecordFunctionCallback::EndCallback end;
};
template <int... Slots>
constexpr std::array<GatePair, sizeof...(Slots)> gate_pairs(std::integer_sequence<int, Slots...>) {
  return {{{&gated_start<Slots>, &gated_end<Slots>}...}};
}
// By slot, the tagged one last.
constexpr auto kGatePairs = gate_pairs(std::make_integer_sequence<int, kTaggedSlot + 1>());

// --- states this sink created, to tell them from the application's --------
// Never destroyed: this plugin's globals are constructed when it is loaded,
// after the host registered its exit handler, so they would be destroyed
// before that handler closes the sink while other threads may still attach.
struct OurStates {
  std::mutex mutex;
  std::vector<std::weak_ptr<c10::DebugInfoBase>> states;
};
OurStates& our_states() {
  static OurStates* s = new OurStates();
  return *s;
}

void remember_state(const std::shared_ptr<c10::DebugInfoBase>& s) {
  OurStates& o = our_states();
  std::lock_guard<std::mutex> lock(o.mutex);
  o.states.erase(
      std::remove_if(o.states.begin(), o.states.end(), [](const auto& w) { return w.expired(); }),
      o.states.end());
  o.states.push_back(s);
}

bool is_ours(const c10::DebugInfoBase* p) {
  OurStates& o = our_states();
  std::lock_guard<std::mutex> lock(o.mutex);
  for (const auto& w : o.states) {
    if (auto s = w.lock(); s.get() == p) return true;  // alive, so the address is not reused
  }
  return false;
}

// A profiler this sink did not start, for the whole process or on the
// calling thread (a memory reporter's disabled state is not one).
bool foreign_profiler_running() {
  if (global_profiler_running()) return true;
  const c10::DebugInfoBase* current = c10::ThreadLocalDebugInfo::get(kProfilerSlot);
  const auto* other = dynamic_cast<const ProfilerStateBase*>(current);
  return other != nullptr && !other->config().disabled() && !is_ours(current);
}

// The profiler's callback behind the gate of `slot`.
at::RecordFunctionCallback gated_copy(const at::RecordFunctionCallback& cb, int slot) {
  std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> scopes;
  for (std::size_t i = 0; i < static_cast<std::size_t>(at::RecordScope::NUM_SCOPES); ++i) {
    if (cb.checkScope(static_cast<at::RecordScope>(i)))
      scopes.insert(static_cast<at::RecordScope>(i));
  }
  at::RecordFunctionCallback gated(kGatePairs[slot].start, kGatePairs[slot].end);
  gated.needsInputs(cb.needsInputs())
      .needsOutputs(cb.needsOutputs())
      .needsIds(cb.needsIds() || slot == kTaggedSlot)
      .samplingProb(cb.samplingProb())
      .scopes(scopes);
  return gated;
}

// Runs fn on a short-lived thread of our own and returns when it is done,
// rethrowing what it threw. libtorch starts and stops the profiler of the
// calling thread; a fresh thread keeps the application thread's
// thread-local state out of it, and works where that state is already gone
// (close() from an atexit handler runs after the main thread's thread_local
// destructors).
template <typename Fn>
void on_own_thread(Fn&& fn) {
  std::exception_ptr error;
  std::thread t([&] {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error) std::rethrow_exception(error);
}

std::string first_line(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

}  // namespace

struct ProfilerSession::Impl {
  std::shared_ptr<c10::DebugInfoBase> state;  // reset by finish()
  const c10::DebugInfoBase* raw = nullptr;    // the state's address, kept after finish
  // The profiler's thread-local callback, as enableProfiler registered it:
  // disableProfiler removes it by this handle. Absent without CPU activity.
  std::optional<at::RecordFunctionCallbacksEntry> callback;
  at::CallbackHandle gate = 0;  // the gated copy, registered for every thread
  int slot = 0;                 // which pair of gate functions it is
  std::mutex mutex;             // finished
  bool finished = false;        // stop_recording() ran
  bool collected = false;       // collect() ran
};

namespace {

// The session state the calling thread carries because it attached.
struct Attachment {
  std::shared_ptr<c10::DebugInfoBase> state;
};
// A plain pointer: trivially destructible thread_locals stay valid while the
// host ends a finishing thread's regions (and so calls detach) at its exit.
// Initial-exec, as every thread_local a region reaches here (see
// calls_under_way.hpp): in a plugin loaded with dlopen each access would
// otherwise be a call to __tls_get_addr, 15% of a selected region's
// instructions (callgrind, instruction_driver `empty`).
thread_local Attachment* t_attachment __attribute__((tls_model("initial-exec"))) = nullptr;

// Set when the thread's thread_local destructors run. The sentinel is
// created when a thread attaches, which is after the host set up the
// destructor that ends the thread's open regions, so it is destroyed
// before that runs: a detach that comes from there sees the flag and leaves
// libtorch's thread-local state, possibly destroyed by then, alone.
thread_local bool t_exiting __attribute__((tls_model("initial-exec"))) = false;
struct ExitSentinel {
  ~ExitSentinel() { t_exiting = true; }
};
thread_local ExitSentinel t_sentinel;
// The sentinel's first use registers its destructor; reaching it goes
// through libstdc++'s TLS wrapper, so it is reached once per thread.
thread_local bool t_sentinel_armed __attribute__((tls_model("initial-exec"))) = false;

}  // namespace

void CollectedProfileDeleter::operator()(CollectedProfile* p) const {
  delete p;
}

ProfilerSession::ProfilerSession(const ProfilerOptions& options, std::int64_t op_budget)
    : impl_(std::make_shared<Impl>()) {
  const ProfilerConfig config(ProfilerState::KINETO, options.record_shapes, options.profile_memory,
                              options.with_stack, options.with_flops, /*with_modules=*/false);
  std::set<ActivityType> activities;
  if (options.cpu) activities.insert(ActivityType::CPU);
  if (options.cuda) activities.insert(ActivityType::CUDA);
  Impl& s = *impl_;
  static const bool fork_handler = [] {
    pthread_atfork(nullptr, nullptr, &close_gate_in_child);
    return true;
  }();
  (void)fork_handler;
  if (g_forked_from_live_session.load()) {
    throw std::runtime_error(
        "this process was forked while its parent's torch profiler session ran, and libtorch "
        "keeps that session in the child: no profiler can start here");
  }
  if (const at::CallbackHandle inherited = g_inherited_gate.exchange(0)) {
    at::removeCallback(inherited);
  }
  // Before asking whether a profiler runs: the previous session's may still
  // be stopping on the sink's thread, and is not the application's.
  wait_until_collected();
  if (application_profiler_started()) {
    throw std::runtime_error(
        "the application runs the torch profiler itself (started for the process or on another "
        "thread; libtorch has one profiler per process)");
  }
  init_kineto_on_this_thread();
  try {
    on_own_thread([&] {
      prof::prepareProfiler(config, activities);
      prof::enableProfiler(config, activities);
      s.state = c10::ThreadLocalDebugInfo::_peek(kProfilerSlot);
      // The callback enableProfiler added is the only one this thread has.
      for (const at::RecordFunctionCallbacksEntry& e :
           at::get_record_function_tls_().sorted_tls_callbacks_) {
        s.callback.emplace(e);
      }
      // This thread's copies of the state and callback end with it.
    });
  } catch (const std::exception& e) {
    // libtorch 2.x has one Kineto profiler per process: one the application
    // started makes ours fail with a message about something else.
    if (foreign_profiler_running()) {
      throw std::runtime_error(
          "the application runs the torch profiler itself (libtorch: " + first_line(e) + ")");
    }
    throw std::runtime_error("libtorch refused to start the profiler (" + first_line(e) +
                             "); is the application running the torch profiler itself?");
  }
  s.raw = s.state.get();
  s.slot = free_slot();
  if (s.callback) {
    g_real_start.store(s.callback->callback_.start());
    g_real_end.store(s.callback->callback_.end());
    // One callback for every thread, which records only on threads that
    // carry the live state: switching a thread on or off is then a push or
    // pop of its debug info (~0.2 us), where adding and removing a
    // thread-local callback rebuilds libtorch's callback tables (~2 us).
    s.gate = at::addGlobalCallback(gated_copy(s.callback->callback_, s.slot));
    std::lock_guard<std::mutex> lock(g_gate_switch_mutex);
    g_gate.store(s.gate);
    g_gate_on.store(true);
    g_refusals.store(0);
    g_attached.store(0);
  }
  // CUDA activity runs for the whole session (device_windows.hpp says why);
  // the export keeps what the windows launched.
  remember_state(s.state);
  g_limited.store(op_budget > 0);
  g_budget.store(op_budget);
  g_refused.store(0);
  g_exhausted_at.store(0);
  // After the previous session finished, before any op can see this one.
  prepare_calls_under_way();
  g_live_slot.store(s.slot);
  if (s.slot == kTaggedSlot) g_first_handle.store(draw_handle());
  g_live.store(s.raw, std::memory_order_release);
}

ProfilerSession::~ProfilerSession() {
  // A session stopped but never collected would keep the next one waiting.
  if (impl_ == nullptr || !impl_->finished || impl_->collected) return;
  try {
    (void)collect();
  } catch (const std::exception&) {
    // Nothing is left to report it to; the next session says what libtorch says.
  }
}

AttachResult ProfilerSession::attach_current_thread() {
  Impl& s = *impl_;
  if (t_attachment != nullptr && t_attachment->state.get() != s.raw) {
    detach_current_thread();  // left over from a finished session
  }
  std::lock_guard<std::mutex> lock(s.mutex);  // finish() waits for this
  if (s.finished) return AttachResult::kFinished;
  if (t_attachment != nullptr) return AttachResult::kAlreadyCollecting;
  if (global_profiler_running()) return AttachResult::kForeignProfiler;
  const c10::DebugInfoBase* current = c10::ThreadLocalDebugInfo::get(kProfilerSlot);
  if (current != nullptr && current == s.raw) return AttachResult::kAlreadyCollecting;
  // A disabled state (the memory_snapshot sink's allocation reporter) is not
  // a profiler: collect above it; it stands aside while we are on top.
  const auto* other = dynamic_cast<const ProfilerStateBase*>(current);
  if (other != nullptr && !other->config().disabled() && !is_ours(current)) {
    return AttachResult::kForeignProfiler;
  }
  if (!t_sentinel_armed) {
    (void)&t_sentinel;  // odr-use: registers its destructor on this thread
    t_sentinel_armed = true;
  }
  c10::ThreadLocalDebugInfo::_push(kProfilerSlot, s.state);
  t_attachment = new Attachment{s.state};
  g_attached.fetch_add(1);
  if (!g_gate_on.load()) switch_gate_on();  // seq_cst: see switch_gate_off
  return AttachResult::kAttached;
}

bool ProfilerSession::detach_current_thread() {
  Attachment* a = t_attachment;
  if (a == nullptr) return false;
  t_attachment = nullptr;
  // An attachment to a finished session was not counted by the live one.
  if (a->state.get() == g_live.load()) g_attached.fetch_sub(1);
  // A thread that is ending keeps its slots: they go with it.
  if (!t_exiting && c10::ThreadLocalDebugInfo::get(kProfilerSlot) == a->state.get()) {
    try {
      c10::ThreadLocalDebugInfo::_pop(kProfilerSlot);
    } catch (const std::exception&) {
      // Someone pushed other debug info inside the region and it is still
      // active: leave the chain alone. The gate keeps a finished state silent.
    }
  }
  delete a;
  return true;
}

std::uint64_t ProfilerSession::current_torch_thread_id() {
  return at::RecordFunction::currentThreadId();
}

bool ProfilerSession::live() const {
  return g_live.load() == impl_->raw;
}

bool ProfilerSession::budget_exhausted() const {
  return g_limited.load(std::memory_order_relaxed) && g_budget.load(std::memory_order_relaxed) <= 0;
}

std::int64_t ProfilerSession::ops_refused() const {
  return g_refused.load();
}

void ProfilerSession::charge(std::int64_t events) {
  if (!g_limited.load(std::memory_order_relaxed)) return;
  if (g_budget.fetch_sub(events, std::memory_order_relaxed) - events <= 0) note_exhausted();
}

std::int64_t ProfilerSession::late_op_ends() {
  return g_late_ends.load();
}

std::int64_t ProfilerSession::exhausted_at_ns() const {
  return g_exhausted_at.load();
}

void ProfilerSession::stop_recording() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.finished) throw std::runtime_error("profiler session stopped twice");
    s.finished = true;
  }
  g_uncollected.store(true);
  const c10::DebugInfoBase* expected = s.raw;
  g_live.compare_exchange_strong(expected, nullptr);  // every thread stops recording
  wait_for_calls_under_way();
  if (t_attachment != nullptr && t_attachment->state == s.state) detach_current_thread();
}

CollectedProfilePtr ProfilerSession::collect() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.finished || s.collected) {
      throw std::runtime_error("profiler session collected before it stopped, or twice");
    }
    s.collected = true;
  }
  at::CallbackHandle gate = s.gate;
  bool remove_gate = false;
  {
    std::lock_guard<std::mutex> lock(g_gate_switch_mutex);  // no switch under way
    remove_gate = gate != 0 && g_gate.compare_exchange_strong(gate, 0);
  }
  CollectedProfilePtr out(new CollectedProfile());
  try {
    on_own_thread([&] {
      // Not on the calling thread: removeCallback looks in that thread's
      // callback list first, which the main thread no longer has when this
      // runs from the exit handler (a use after free).
      if (remove_gate) at::removeCallback(s.gate);
      // libtorch stops the profiler of the calling thread: lend this one the
      // state and the callback, which disableProfiler takes back.
      c10::ThreadLocalDebugInfo::_push(kProfilerSlot, s.state);
      if (s.callback) {
        at::RecordFunctionTLS tls = at::get_record_function_tls_();
        tls.sorted_tls_callbacks_.push_back(*s.callback);
        at::set_record_function_tls_(tls);
      }
      out->result = prof::disableProfiler();
    });
  } catch (const std::exception& e) {
    s.state.reset();
    note_collected();
    throw std::runtime_error("libtorch failed to stop the profiler: " + first_line(e));
  }
  s.state.reset();
  note_collected();
  return out;
}

void ProfilerSession::prime(const ProfilerOptions& options) {
  const ProfilerConfig config(ProfilerState::KINETO, options.record_shapes, options.profile_memory,
                              options.with_stack, options.with_flops, /*with_modules=*/false);
  std::set<ActivityType> activities;
  if (options.cpu) activities.insert(ActivityType::CPU);
  if (options.cuda) activities.insert(ActivityType::CUDA);
  // The session start says why it cannot run.
  if (g_forked_from_live_session.load()) return;
  wait_until_collected();
  if (application_profiler_started()) return;
  init_kineto_on_this_thread();
  try {
    on_own_thread([&] {
      // The callback registry (libtorch builds it on first use).
      const at::CallbackHandle h =
          at::addGlobalCallback(at::RecordFunctionCallback([](const at::RecordFunction&) {
                                  return std::unique_ptr<at::ObserverContext>();
                                }).scopes({at::RecordScope::USER_SCOPE}));
      at::removeCallback(h);
      // Whatever starting, stopping and reading a profile builds.
      prof::prepareProfiler(config, activities);
      prof::enableProfiler(config, activities);
      { RECORD_USER_SCOPE("regiontrace.prime"); }
      const auto result = prof::disableProfiler();
      (void)result->events();
    });
  } catch (const std::exception&) {
    // A profiler of the application's is running: the sink will stand aside
    // when it tries for real, and says so then.
  }
}

std::string ProfilerSession::torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

bool ProfilerSession::cuda_available() {
  return at::hasCUDA();
}

}  // namespace regiontrace::torch_profiler
