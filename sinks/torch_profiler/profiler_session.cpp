#include "profiler_session.hpp"

#include <ATen/Context.h>
#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "callback_gate.hpp"
#include "collected_profile.hpp"
#include "kineto_first_init.hpp"
#include "session_slots.hpp"

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

// libtorch's one profiler in this process, as the sessions take turns.
// One for the process: the fork handler is a plain function. Never
// destroyed: a session may be collected from an exit handler, after static
// destructors ran.
class ProcessProfiler {
 public:
  // Set in a child forked while a session was live or uncollected:
  // libtorch's Kineto keeps that session's state (and a handler thread the
  // child does not have), so starting or stopping a profiler there ends the
  // child in std::terminate.
  bool forked_from_live_session() const { return forked_from_live_.load(); }

  // A session stopped recording but libtorch's profiler still runs until
  // collect(): the next session waits for that.
  void note_uncollected() { uncollected_.store(true); }
  void wait_until_collected() {
    std::unique_lock<std::mutex> lock(mutex_);
    collected_.wait(lock, [this] { return !uncollected_.load(); });
  }
  void note_collected() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      uncollected_.store(false);
    }
    collected_.notify_all();
  }

  // A forked child (a DataLoader-style worker) must not record into the
  // parent's session, which it never writes: the gate closes at once.
  void close_in_child() {
    const bool was_live = g_callback_gate.close_in_child();
    if (was_live || uncollected_.load()) forked_from_live_.store(true);
  }

 private:
  std::atomic<bool> forked_from_live_{false};
  std::atomic<bool> uncollected_{false};
  std::mutex mutex_;
  std::condition_variable collected_;
};

ProcessProfiler& process_profiler() {
  static ProcessProfiler* p = new ProcessProfiler();
  return *p;
}

void close_gate_in_child() {
  process_profiler().close_in_child();
}

// What libtorch is asked to profile: the same for a session and for prime().
struct ProfilerRequest {
  ProfilerConfig config;
  std::set<ActivityType> activities;
};

ProfilerRequest profiler_request(const ProfilerOptions& options) {
  ProfilerRequest r{ProfilerConfig(ProfilerState::KINETO, options.record_shapes,
                                   options.profile_memory, options.with_stack, options.with_flops,
                                   /*with_modules=*/false),
                    {}};
  if (options.cpu) r.activities.insert(ActivityType::CPU);
  if (options.cuda) r.activities.insert(ActivityType::CUDA);
  return r;
}

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
  const ProfilerRequest request = profiler_request(options);
  Impl& s = *impl_;
  static const bool fork_handler = [] {
    pthread_atfork(nullptr, nullptr, &close_gate_in_child);
    return true;
  }();
  (void)fork_handler;
  ProcessProfiler& process = process_profiler();
  if (process.forked_from_live_session()) {
    throw std::runtime_error(
        "this process was forked while its parent's torch profiler session ran, and libtorch "
        "keeps that session in the child: no profiler can start here");
  }
  g_callback_gate.remove_inherited();
  // Before asking whether a profiler runs: the previous session's may still
  // be stopping on the sink's thread, and is not the application's.
  process.wait_until_collected();
  if (application_profiler_started()) {
    throw std::runtime_error(
        "the application runs the torch profiler itself (started for the process or on another "
        "thread; libtorch has one profiler per process)");
  }
  init_kineto_on_this_thread();
  try {
    on_own_thread([&] {
      prof::prepareProfiler(request.config, request.activities);
      prof::enableProfiler(request.config, request.activities);
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
  s.slot = SessionSlots::free_slot();
  if (s.callback) {
    g_callback_gate.install(s.callback->callback_, s.slot);
    s.gate = g_callback_gate.handle();
  }
  // CUDA activity runs for the whole session (device_windows.hpp says why);
  // the export keeps what the windows launched.
  remember_state(s.state);
  g_callback_gate.open(s.raw, s.slot, op_budget);
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
  g_callback_gate.thread_attached();
  return AttachResult::kAttached;
}

bool ProfilerSession::detach_current_thread() {
  Attachment* a = t_attachment;
  if (a == nullptr) return false;
  t_attachment = nullptr;
  g_callback_gate.thread_detached(a->state.get());
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
  return g_callback_gate.live() == impl_->raw;
}

bool ProfilerSession::budget_exhausted() const {
  return g_callback_gate.budget().exhausted();
}

std::int64_t ProfilerSession::ops_refused() const {
  return g_callback_gate.budget().refused();
}

void ProfilerSession::charge(std::int64_t events) {
  g_callback_gate.budget().charge(events);
}

std::int64_t ProfilerSession::late_op_ends() {
  return g_callback_gate.late_ends();
}

std::int64_t ProfilerSession::exhausted_at_ns() const {
  return g_callback_gate.budget().exhausted_at_ns();
}

void ProfilerSession::stop_recording() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.finished) throw std::runtime_error("profiler session stopped twice");
    s.finished = true;
  }
  process_profiler().note_uncollected();
  g_callback_gate.close(s.raw);
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
  const bool remove_gate = g_callback_gate.release(s.gate);
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
    process_profiler().note_collected();
    throw std::runtime_error("libtorch failed to stop the profiler: " + first_line(e));
  }
  s.state.reset();
  process_profiler().note_collected();
  return out;
}

void ProfilerSession::prime(const ProfilerOptions& options) {
  const ProfilerRequest request = profiler_request(options);
  // The session start says why it cannot run.
  ProcessProfiler& process = process_profiler();
  if (process.forked_from_live_session()) return;
  process.wait_until_collected();
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
      prof::prepareProfiler(request.config, request.activities);
      prof::enableProfiler(request.config, request.activities);
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
